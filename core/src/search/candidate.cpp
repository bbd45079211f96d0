#include "search/candidate.h"

#include "search/choices.h"

namespace trainsim {

Config base_config(const SearchSpec& spec) {
  Config config;
  config.model = spec.model;
  config.system = spec.system;
  config.training = spec.training;
  return config;
}

void apply_candidate(const SearchSpec& spec, const Candidate& c, Config& config) {
  config.system.num_gpus = c.num_gpus;
  TrainingSpec& t = config.training;
  t.micro_batch_size = c.micro_batch_size;
  t.num_micro_batches = c.num_micro_batches;
  t.zero_stage = c.zero_stage;
  t.recompute = spec.recompute[static_cast<size_t>(c.recompute)].spec;  // reuses its storage
  if (t.recompute.granularity != RecomputeGranularity::kNone) {
    t.recompute.num_layers = c.recompute_num_layers;
  }
  ParallelSpec& p = t.parallel;
  p.tp = c.tp;
  p.pp = c.pp;
  p.dp = c.dp;
  p.cp = c.cp;
  p.ep = c.ep;
  p.etp = c.etp;
  p.vpp = c.vpp;
  p.sequence_parallel = c.sequence_parallel;
  if (c.first_stage_layers > 0) {
    p.num_layers_in_first_stage = c.first_stage_layers;
    p.num_layers_in_last_stage = c.last_stage_layers;
  } else {
    p.num_layers_in_first_stage.reset();
    p.num_layers_in_last_stage.reset();
  }
  apply_choices(spec, c.choice, t);
}

}  // namespace trainsim
