#include <vector>

#include "binding.h"

namespace attnprof::bindings {
namespace {
std::vector<BindFn>& registry() {
  static std::vector<BindFn> fns;
  return fns;
}
}  // namespace

BindingRegistration::BindingRegistration(BindFn fn) { registry().push_back(fn); }

}  // namespace attnprof::bindings

NB_MODULE(_core, m) {
  m.doc() = "attnprof C++ core (ingest, extraction, rules, analyses, renderers)";
  m.attr("__version__") = ATTNPROF_VERSION;
  for (auto fn : attnprof::bindings::registry()) fn(m);
}
