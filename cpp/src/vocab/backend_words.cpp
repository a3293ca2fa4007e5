#include "attnprof/vocabulary.h"

namespace attnprof {
namespace {

// Rows a test added (ScopedBackendWords); empty outside such a test.
std::span<const BackendWord> extra_backend_words;

}  // namespace

const BackendWord* backend_word(std::string_view name) {
  for (const auto rows : {std::span<const BackendWord>(kBackendWords), extra_backend_words})
    for (const BackendWord& w : rows)
      if (w.name == name) return &w;
  return nullptr;
}

ScopedBackendWords::ScopedBackendWords(std::span<const BackendWord> extra) : previous_(extra_backend_words) {
  extra_backend_words = extra;
}

ScopedBackendWords::~ScopedBackendWords() { extra_backend_words = previous_; }

}  // namespace attnprof
