#include "attnprof/error.h"

namespace attnprof {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kFileNotFound: return "file_not_found";
    case ErrorCode::kEmptyInput: return "empty_input";
    case ErrorCode::kCorruptGzip: return "corrupt_gzip";
    case ErrorCode::kMalformedJson: return "malformed_json";
    case ErrorCode::kNotATrace: return "not_a_trace";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kIoError: return "io_error";
    case ErrorCode::kInternal: return "internal";
  }
  return "unknown";
}

}  // namespace attnprof
