// Where the profiled code came from, so `attnprof diff` can name the commit that changed it.
#pragma once

#include <string>

namespace attnprof {

struct CodeInfo {
  std::string git_commit;   // full hash, "" outside a git work tree
  bool git_dirty = false;
  std::string git_root;
  std::string config_hash;  // hash of the model config when the capture knows it
};

}  // namespace attnprof
