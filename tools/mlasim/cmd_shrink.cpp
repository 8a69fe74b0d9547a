// `mlasim shrink SCENARIO --property NAME -o FILE`: reduce a scenario that violates a property to
// a minimal one that still does, and write it as a scenario.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "config/request_tokens.h"
#include "scenario/scenario_writer.h"
#include "tools/fuzz/shrinker.h"
#include "scenario/scenario_loader.h"
#include "tools/fuzz/finding.h"
#include "tools/mlasim/commands.h"
#include "tools/mlasim/fuzz_cli.h"

namespace mlasim::cli {
namespace {

struct ShrinkFlags {
  std::string scenario;
  std::string property;
  std::vector<std::string> sets;
  std::vector<std::string> injects;
  bool model = false;
  std::string out;
  std::string candidates;  // --candidates DIR
};

// --candidates DIR: the traces one edit smaller than `s`, in the order the shrinker tries them, as
// DIR/000.yaml, DIR/001.yaml, ...; the caller judges them (tools/conformance, against vLLM).
int write_candidates(Scenario s, const ShrinkFlags& f) {
  s.expect = {};
  s.description.clear();
  const std::vector<Scenario> candidates = shrink_candidates(s, set_keys(f.sets));
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::string path = fmt::format("{}/{:03}.yaml", f.candidates, i);
    const std::string comment = fmt::format("candidate {} of {} one edit smaller than {}", i, candidates.size(), f.scenario);
    if (Status st = write_creating_folder(path, scenario_to_yaml(candidates[i], comment)); !st)
      return report_error(st.error());
  }
  std::cout << candidates.size() << " candidates in " << f.candidates << "\n";
  return kExitOk;
}

int run_shrink(const ShrinkFlags& f) {
  Result<Scenario> loaded = load_scenario_file(f.scenario, f.sets);
  if (!loaded) {
    std::cerr << loaded.error().format() << "\n";
    return kExitBadInput;
  }
  Scenario s = loaded.value();
  resolve_requests(s);  // the shrinker edits token ids: every prompt and output listed
  if (!s.requests_file.empty()) {
    std::cerr << "mlasim shrink: " << f.scenario
              << " reads its requests from a requests_file; shrink works on inline requests\n"
                 "  hint: list the requests under `requests:` (a short trace: shrinking replays it many times)\n";
    return kExitBadInput;
  }
  if (f.candidates.empty() == f.property.empty()) {
    std::cerr << "mlasim shrink: give --property NAME (shrink) or --candidates DIR (write the candidates), one of them\n";
    return kExitBadInput;
  }
  if (!f.candidates.empty()) return write_candidates(s, f);
  s.name += "_min";  // its own golden folder, beside the original's
  std::vector<Property> properties;
  if (!parse_properties({f.property}, f.model, properties)) return kExitBadInput;
  if (properties[0] == Property::kMatchesGoldenSplit) {
    std::cerr << "mlasim shrink: " << f.property
              << " cannot be shrunk: a smaller trace has no golden\n  hint: `mlasim check SCENARIO` shows the first "
                 "differing step against its golden\n";
    return kExitBadInput;
  }
  FaultSet faults;
  if (!parse_faults(f.injects, faults)) return kExitBadInput;
  if (!output_path_ok("-o", f.out)) return kExitBadInput;
  std::optional<Violation> v = check_property(s, properties[0], faults);
  if (!v) {
    std::cout << s.name << " (" << describe_batch(s) << ") does not violate " << f.property << "; nothing to shrink\n";
    return kExitOk;
  }
  std::cout << s.name << " (" << describe_batch(s) << "): " << f.property << " violated\n  " << v->detail << "\n";
  return shrink_and_write(s, *v, faults, set_keys(f.sets), f.out, "shrunk by mlasim shrink from " + f.scenario);
}

}  // namespace

void add_shrink_command(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<ShrinkFlags>();
  CLI::App* cmd = app.add_subcommand(
      "shrink",
      "Reduce SCENARIO, which violates the property, to a minimal scenario that still violates it: drop\n"
      "requests, shorten prompts and outputs, move arrivals earlier, drop keys back to their defaults,\n"
      "lower budgets (the engine profile and backend stay). Prints the result and writes it with -o as\n"
      "a scenario with a one-line comment and an expect: block that `mlasim check` fails.\n\n"
      "Properties:\n" +
          properties_help() +
          "\nExit 0 the scenario does not violate the property (or --candidates wrote them), 1 shrunk (written\n"
          "with -o), 2 bad input.\n"
          "Example: mlasim shrink scenarios/seed/one_token_prompt_behind_decode.yaml \\\n"
          "           --property no_fresh_prefill_on_decode_path -o /tmp/minimal.yaml");
  cmd->add_option("scenario", f->scenario, "The scenario file")->required();
  cmd->add_option("--property", f->property, "The violated property")->type_name("NAME");
  cmd->add_option("--candidates", f->candidates,
                  "Instead of shrinking, write every valid trace one edit smaller than SCENARIO, in the order the\n"
                  "shrinker tries them, as DIR/000.yaml, DIR/001.yaml, ... (for a caller that judges them itself)")
      ->type_name("DIR");
  cmd->add_option("--set", f->sets, "Override a scenario key first (repeatable); the shrinker keeps it")->type_name("KEY=VALUE");
  cmd->add_flag("--model", f->model, "Run the MLA model (fp64 CPU reference) for same_logits_as_strict");
  cmd->add_option("--inject", f->injects, "Inject a fault into the model (repeatable; see `mlasim run --help`)");
  cmd->add_option("-o,--out", f->out, "Write the minimal scenario to FILE");
  cmd->callback([f, &exit_code] { exit_code = run_shrink(*f); });
}

}  // namespace mlasim::cli
