// Where the profiled code came from, so `attnprof diff` can name the commit that changed it.
#pragma once

#include <string>
#include <vector>

namespace attnprof {

struct CodeInfo {
  std::string git_commit;   // full hash, "" outside a git work tree
  bool git_dirty = false;
  std::string git_root;
  std::string config_hash;  // hash of the model config when the capture knows it
  // Source files of the Python frames enclosing attention calls (with_stack traces), as the
  // profiler names them ("model.py", "transformers/models/llama/modeling_llama.py"). `diff`
  // lists only the commits that touched these files.
  std::vector<std::string> source_files;
};

}  // namespace attnprof
