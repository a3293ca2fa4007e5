// The Python module attnprof._core is assembled from one file per topic under cpp/bindings;
// each registers its functions with a static BindingRegistration (no central list to edit).
// Bindings only convert arguments: no analysis logic lives here or in Python.
#pragma once

#include <nanobind/nanobind.h>

namespace attnprof::bindings {

using BindFn = void (*)(nanobind::module_& m);

struct BindingRegistration {
  explicit BindingRegistration(BindFn fn);
};

}  // namespace attnprof::bindings
