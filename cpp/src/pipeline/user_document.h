// The files a user hands the analysis (--gpu-spec, --kernels): JSON, or TOML when the name ends
// in ".toml". A TOML document is turned into the JSON value it spells, so one validator per
// file kind reads both and says the same one-line errors (docs/cost.md).
#pragma once

#include "attnprof/json_input.h"  // first: it configures nlohmann/json.hpp

#include <string>
#include <string_view>

#include "attnprof/error.h"

namespace attnprof {

// True for a path whose document is TOML (".toml", any case).
bool is_toml_path(std::string_view path);

// The document of `text`, read as TOML (`toml` true) or JSON; an error reads
// "<path>: not valid TOML: <why> (line L, column C)" or parse_json_input's.
Result<nlohmann::json> parse_user_document(std::string_view text, const std::string& path, std::string_view what,
                                           bool toml);

// read_text_file + parse_user_document, TOML by the path's extension.
Result<nlohmann::json> load_user_document(const std::string& path, std::string_view what);

}  // namespace attnprof
