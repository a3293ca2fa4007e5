// Types of the optional Report sections. Each section has its own header, owned by the
// stage that fills it; report.h includes them all so the Report stays one document.
#pragma once

#include "attnprof/sections/capture_info.h"  // filled by cpp/src/capture (live capture merge)
#include "attnprof/sections/code_info.h"     // filled by cpp/src/diff (git commit, config hash)
#include "attnprof/sections/cost.h"          // filled by cpp/src/analysis (roofline, memory, scaling)
#include "attnprof/sections/diff.h"          // filled by cpp/src/compare and cpp/src/diff
#include "attnprof/sections/explanation.h"   // filled by cpp/src/rules
#include "attnprof/sections/heads.h"         // filled by cpp/src/heads
#include "attnprof/sections/ranks.h"         // filled by cpp/src/report (multi-rank merge)
#include "attnprof/sections/verification.h"  // filled by attnprof.verify through cpp/src/verify
