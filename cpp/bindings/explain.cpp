// attnprof.explain and attnprof.matrix: the answers of `attnprof explain` and `attnprof matrix`
// from the same core functions (explain_input.h, kernel_matrix.h), in any document form.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "attnprof/document.h"
#include "attnprof/explain_input.h"
#include "attnprof/kernel_matrix.h"
#include "binding.h"

namespace nb = nanobind;

namespace attnprof::bindings {
namespace {

std::string form_of(const Document& doc, const std::string& form) {
  Result<DocumentForm> f = document_form_named(form);
  if (!f) throw nb::value_error(f.error().message.c_str());
  Result<std::string> text = doc.render(*f);
  if (!text) throw nb::value_error(text.error().message.c_str());
  return *text;
}

std::string explain(const std::string& q, const std::string& k, const std::string& v, const std::string& dtype,
                    const std::string& mask, const std::string& mask_shape, bool causal, double dropout, bool gqa,
                    bool grad, bool nested, bool deterministic, const std::string& backends, const std::string& arch,
                    const std::string& torch, const std::string& cudnn, const std::string& form) {
  const rules::ExplainRequest request{q,    k,     v,      dtype,         mask,    mask_shape, backends, causal,
                                      gqa,  grad,  nested, deterministic, dropout, arch,       torch,    cudnn};
  auto answer = rules::explain_request(request);
  if (!answer) throw nb::value_error(answer.error().message.c_str());
  return form_of(explain_document(std::move(*answer)), form);
}

std::string matrix(const std::vector<std::string>& gpus, const std::vector<std::string>& dtypes, const std::string& torch,
                   const std::string& cudnn, const std::string& mask, int64_t head_dim, int64_t seq_len, bool causal,
                   bool grad, const std::string& form) {
  const MatrixRequest request{gpus, dtypes, torch, cudnn, mask, head_dim, seq_len, causal, grad};
  Result<Table> table = kernel_matrix(request);
  if (!table) throw nb::value_error(table.error().message.c_str());
  return form_of(table_document(std::move(*table)), form);
}

void bind_explain(nb::module_& m) {
  m.def("explain", &explain, nb::kw_only(), nb::arg("q"), nb::arg("k") = "", nb::arg("v") = "", nb::arg("dtype") = "bf16",
        nb::arg("mask") = "none", nb::arg("mask_shape") = "", nb::arg("causal") = false, nb::arg("dropout") = 0.0,
        nb::arg("gqa") = false, nb::arg("grad") = false, nb::arg("nested") = false, nb::arg("deterministic") = false,
        nb::arg("backends") = "", nb::arg("arch") = "sm90", nb::arg("torch") = "2.11", nb::arg("cudnn") = "9.19",
        nb::arg("form") = "text",
        "Why SDPA picks a backend for these inputs, what the others lack, and the fix: the answer of "
        "`attnprof explain` (shapes as \"B,H,S,D\"), as form = text, json, markdown, html or csv.");
  m.def("matrix", &matrix, nb::kw_only(), nb::arg("gpus") = std::vector<std::string>{},
        nb::arg("dtypes") = std::vector<std::string>{}, nb::arg("torch") = "2.11", nb::arg("cudnn") = "9.19",
        nb::arg("mask") = "none", nb::arg("head_dim") = 128, nb::arg("seq_len") = 2048, nb::arg("causal") = true,
        nb::arg("grad") = false, nb::arg("form") = "text",
        "Which attention kernels run per GPU and dtype: the table of `attnprof matrix`, as form = text, json, "
        "markdown, html or csv.");
}

const BindingRegistration kRegistration(&bind_explain);

}  // namespace
}  // namespace attnprof::bindings
