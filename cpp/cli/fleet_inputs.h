// What `attnprof analyze` accepts beside single traces: a directory, a glob, an @list of rank
// traces (a fleet, one Report per stage), and `--ray`, which hands the whole command to
// python/attnprof/fleet.py in the Python that installed this binary.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/error.h"

namespace attnprof::cli {

// The rank traces an input names, when it names a fleet: a directory's trace files, a glob's
// matches (sorted), the lines of an @list file (blank and # lines skipped). nullopt for a
// single trace. Errors: a glob that matches nothing, an @list that cannot be read or is empty.
Result<std::optional<std::vector<std::string>>> fleet_files(const std::string& input);

// Whether `--ray`'s value is a Ray address ("auto", "local", "ray://host:port", "host:port")
// rather than an input CLI11 took for it.
bool looks_like_ray_address(const std::string& value);

struct FleetRequest {
  std::vector<std::string> inputs;
  std::string address;
  std::string out_dir;
  bool strict = false;
  std::map<std::string, std::string, std::less<>> outputs;  // format name -> path
  std::string print_format;
  std::string torch_version, arch;
  std::string gpu_spec, kernels;  // the user files' paths; the driver reads them for every worker
};

// Replaces this process with `python -m attnprof.fleet --request JSON`; returns only on failure
// to start it (the error says how to install attnprof[ray]).
Error run_fleet_in_python(const FleetRequest& request);

}  // namespace attnprof::cli
