// The spelling rules of text_format.h as the page's script reads them (dashboard/format.js),
// so the dashboard prints a size, a time, a rate or a share as the text and Markdown do.
#include <cmath>
#include <string>

#include "attnprof/text_format.h"
#include "render/html_view.h"

namespace attnprof::render {

nlohmann::json format_spec_view() {
  nlohmann::json quantities = nlohmann::json::object();
  for (const QuantitySpelling& q : quantity_spellings()) {
    nlohmann::json units = nlohmann::json::array();
    for (const UnitSpelling& u : q.units) {
      nlohmann::json unit = {{"suffix", std::string(u.suffix)}, {"size", u.size}, {"digits", u.digits}};
      if (std::isfinite(u.next_at)) unit["next_at"] = u.next_at;  // JSON has no infinity: the last unit has none
      units.push_back(std::move(unit));
    }
    quantities[std::string(q.name)] = {
        {"scale", q.scale}, {"zero_unit", q.zero_unit}, {"prefix", std::string(q.prefix)}, {"units", std::move(units)}};
  }
  return {{"unknown", std::string(kUnknownQuantityText)}, {"quantities", std::move(quantities)}};
}

}  // namespace attnprof::render
