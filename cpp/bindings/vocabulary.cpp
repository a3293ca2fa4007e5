// The vocabulary (cpp/include/attnprof/vocabulary.h) for Python: backends with their SDPBackend
// member and class, dtypes with their torch spellings, finding ids, ingest issue kinds, the
// forced-backend file-name marker and the mask kinds and patterns, as plain tuples of dicts
// built once from the C++ tables; mask kinds, mask patterns, directions and phases also as
// submodules of upper-case names (_core.mask_pattern.CAUSAL), so Python code (sweep.py, the
// capture, verify) reads these facts instead of keeping lists or spellings of its own.
#include <nanobind/nanobind.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <span>
#include <string>
#include <string_view>

#include "attnprof/vocabulary.h"
#include "binding.h"

namespace nb = nanobind;

namespace attnprof::bindings {
namespace {

nb::str str(std::string_view s) { return nb::str(s.data(), s.size()); }

template <size_t N>
nb::tuple spellings(const std::array<std::string_view, N>& words) {
  nb::list out;
  for (std::string_view w : words)
    if (!w.empty()) out.append(str(w));
  return nb::tuple(out);
}

nb::tuple backends() {
  nb::list out;
  for (const BackendWord& w : kBackendWords) {
    nb::dict row;
    row["name"] = str(w.name);
    row["sdp_backend"] = str(w.sdp_backend);
    row["device"] = str(w.device);
    row["kind"] = str(backend_class_name(w.kind));
    row["pinnable"] = w.pinnable;
    out.append(row);
  }
  return nb::tuple(out);
}

nb::tuple dtypes() {
  nb::list out;
  for (const DtypeWord& w : kDtypeWords) {
    nb::dict row;
    row["name"] = str(w.name);
    row["kineto"] = spellings(w.kineto);
    row["torch"] = spellings(w.torch);
    row["bytes"] = w.bytes;
    row["rules"] = w.rules;
    out.append(row);
  }
  return nb::tuple(out);
}

nb::tuple fix_words() {
  nb::list out;
  for (const FixWord& w : kFixWords) {
    nb::dict row;
    row["id"] = str(w.id);
    row["change"] = str(w.change);
    row["changes_backend"] = w.changes_backend;
    out.append(row);
  }
  return nb::tuple(out);
}

nb::tuple mask_words(std::span<const MaskWord> words) {
  nb::list out;
  for (const MaskWord& w : words) {
    nb::dict row;
    row["name"] = str(w.name);
    row["label"] = str(w.label);
    out.append(row);
  }
  return nb::tuple(out);
}

// A submodule whose attributes are the words in upper case (mask_pattern.SLIDING_WINDOW ==
// "sliding_window"), so Python names a word by an attribute and never spells it.
template <typename Names>
void bind_names(nb::module_& m, const char* module_name, const Names& names) {
  nb::module_ sub = m.def_submodule(module_name);
  for (std::string_view name : names) {
    std::string attr(name);
    std::transform(attr.begin(), attr.end(), attr.begin(), [](unsigned char c) { return std::toupper(c); });
    sub.attr(attr.c_str()) = str(name);
  }
}

template <size_t N>
std::array<std::string_view, N> names_of(const std::array<MaskWord, N>& words) {
  std::array<std::string_view, N> out;
  std::transform(words.begin(), words.end(), out.begin(), [](const MaskWord& w) { return w.name; });
  return out;
}

nb::tuple finding_ids() {
  nb::list out;
  for (const FindingWord& w : kFindingWords) out.append(str(w.id));
  return nb::tuple(out);
}

nb::tuple ingest_issue_kinds() {
  nb::list out;
  for (const IngestIssueWord& w : kIngestIssueWords) out.append(str(w.kind));
  return nb::tuple(out);
}

void bind_vocabulary(nb::module_& m) {
  m.attr("BACKENDS") = backends();
  m.attr("DTYPES") = dtypes();
  m.attr("FINDING_IDS") = finding_ids();
  m.attr("FIXES") = fix_words();
  m.attr("INGEST_ISSUE_KINDS") = ingest_issue_kinds();
  m.attr("FORCED_BACKEND_MARKER") = str(kForcedBackendMarker);
  m.attr("MASK_KINDS") = mask_words(kMaskKindWords);
  m.attr("MASK_PATTERNS") = mask_words(kMaskPatternWords);
  bind_names(m, "mask_kind", names_of(kMaskKindWords));
  bind_names(m, "mask_pattern", names_of(kMaskPatternWords));
  bind_names(m, "direction", kDirections);
  bind_names(m, "phase", kPhases);
}

const BindingRegistration registration(bind_vocabulary);

}  // namespace
}  // namespace attnprof::bindings
