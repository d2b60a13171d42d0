// Seed report 003 — two-stage fine-tuning on a T4: stage 1 (frozen backbone) fits, stage 2
// (everything trained) dies at its first iteration; progressive unfreezing, a halved stage-2
// batch and gradient checkpointing are the remedies.
//
// The model: the report's backbone is an EdgeNeXt; the stand-in here is torchvision's
// ConvNeXt-T feature extractor (models/torchvision.hpp's blocks, the same 27.8M parameters, see
// the static_assert), its four stages named so that training::train_only can express the
// unfreezing phases, and a decoder: three ×2 up-sampling blocks to stride 4, seven expert
// branches summed ("--num-experts 7"), a 1-channel head up-sampled to the input. Deep
// supervision's side outputs (1-channel maps) are left out: a few MiB at these sizes.
// Names nest so that one prefix selects "the last k stages and the decoder":
//   stage 1 = train_only "decoder", phase 1 = "unfreeze1" (stage 4 + decoder),
//   phase 2 = "unfreeze2" (stages 3-4 + decoder), phase 3 = everything.
// Training: AMP fp16 (torch.amp.autocast), AdamW, EMA, 384×384 images, T4 (14.74 GiB).
//
// The stand-in is lighter per image than the report's model (whose decoder the report does not
// size): at the report's batch 2 everything fits. The mechanism — what stage 2 adds — is the
// same, so the phase-by-phase analysis is shown at the batch where the stand-in crosses the T4's
// capacity: stage-1 batch 64, where stage 1 fits and stage 2 does not.
#include <gpubudget/models/seed_variants.hpp>
#include <gpubudget/models/torchvision.hpp>
#include <gpubudget/planner.hpp>

#include <cstdio>
#include <iostream>
#include <string>

using namespace gpubudget;

namespace {
constexpr std::int64_t image = 384;
// models/seed_variants.hpp: ConvNeXt-T stages named stem, stage1..stage4; decoder of three x2
// up-sampling blocks, 7 experts summed, a 1-channel head.
constexpr auto net = models::finetune_standin(image);

constexpr auto& gpu = devices::t4;  // 14.74 GiB, the capacity in the report's OOM message

constexpr training phase(const char* train_only, std::int64_t batch, bool checkpoint = false) {
  return training{.batch = batch, .precision = amp_fp16, .optimizer = adamw, .ema = true, .checkpoint_blocks = checkpoint,
                  .train_only = train_only};
}
constexpr const char* stage1 = models::finetune_phase::stage1;  // "decoder"
constexpr const char* phase1 = models::finetune_phase::phase1;  // "unfreeze1": stage 4 + decoder
constexpr const char* phase2 = models::finetune_phase::phase2;  // "unfreeze2": stages 3-4 + decoder
constexpr const char* stage2 = models::finetune_phase::stage2;  // nullptr: everything trains

// --- the stand-in's backbone is ConvNeXt-T's feature extractor --------------------------------------
constexpr auto stage1_b1 = budget_totals(net, phase(stage1, 1), gpu);
constexpr auto tiny = budget_totals(models::convnext_tiny(image, 1000, /*frozen_backbone=*/true), training{.batch = 1}, gpu);
static_assert(stage1_b1.parameter_count - stage1_b1.trainable_count == tiny.parameter_count - tiny.trainable_count);  // 27,818,592 frozen
// AdamW: 2 fp32 states per trainable parameter; EMA: one fp32 copy of every parameter.
static_assert(stage1_b1.optimizer_state == 2 * 4 * stage1_b1.trainable_count);
static_assert(stage1_b1.ema == 4 * stage1_b1.parameter_count);

// --- phase by phase at stage-1 batch 64 -------------------------------------------------------------
constexpr std::int64_t batch = 64;
constexpr auto s1 = budget_totals(net, phase(stage1, batch), gpu);
constexpr auto p1 = budget_totals(net, phase(phase1, batch), gpu);
constexpr auto p2 = budget_totals(net, phase(phase2, batch), gpu);
constexpr auto s2 = budget_totals(net, phase(stage2, batch), gpu);
static_assert(require_fits<s1>);  // stage 1 fits
static_assert(!fits(s2));         // stage 2 at the same batch does not
static_assert(fits(p1) && fits(p2));  // progressive unfreezing: phases 1 and 2 fit at the full batch
static_assert(s1.total() < p1.total() && p1.total() < p2.total() && p2.total() < s2.total());
static_assert(s2.optimizer_state == 2 * 4 * s2.parameter_count);  // stage 2: AdamW state for every parameter
// The report's remedies for phase 3 (= stage 2): halve the stage-2 batch, or checkpoint.
constexpr auto s2_half = budget_totals(net, phase(stage2, batch / 2), gpu);
constexpr auto s2_ckpt = budget_totals(net, phase(stage2, batch, true), gpu);
static_assert(require_fits<s2_half>);
static_assert(require_fits<s2_ckpt>);

std::string ratio(std::int64_t a, std::int64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fx", static_cast<double>(a) / static_cast<double>(b));
  return buf;
}
std::string phase_label(const char* name, const char* what) { return std::string(name) + " (" + what + ")"; }
}  // namespace

int main() {
  std::cout << "# Seed 003: two-stage fine-tuning, ConvNeXt-T stand-in + 7-expert decoder, 384x384, AMP fp16, AdamW, EMA, T4\n\n";

  std::cout << "## At the report's batch (stage 1: 2, stage 2: 2 before the fix, 1 after)\n\n";
  std::cout << comparison_table({{"stage 1, batch 2", budget_totals(net, phase(stage1, 2), gpu)},
                                 {"stage 2, batch 2 (OOM in the report)", budget_totals(net, phase(stage2, 2), gpu)},
                                 {"stage 2, batch 1 (the report's fix)", budget_totals(net, phase(stage2, 1), gpu)}})
            << "\nThe stand-in fits at these sizes: the report's PyTorch had 12.77 GiB allocated (and 1.45 GiB reserved but "
               "unallocated, 10.2 % of what it held — the 10 % fragmentation reserve the budget adds) when stage 2 died, ~"
            << ratio(static_cast<std::int64_t>(12.77 * static_cast<double>(GiB)), budget_totals(net, phase(stage2, 2), gpu).peak_tensor_bytes())
            << " the stand-in's live tensors. Its decoder and experts are not sized in the report, so the stand-in reproduces the "
               "mechanism, not the magnitude; below, at stage-1 batch "
            << batch << ", it crosses the T4's capacity the same way.\n\n";

  std::cout << "## Phase by phase at stage-1 batch " << batch << "\n\n";
  std::cout << "| Phase | Trainable | Gradients | AdamW state | Saved activations | Device total | Fits |\n|---|---:|---:|---:|---:|---:|---|\n";
  auto row = [](const std::string& label, const memory_budget& b) {
    std::cout << "| " << label << " | " << b.trainable_count << " | " << format_bytes(b.gradients) << " | " << format_bytes(b.optimizer_state)
              << " | " << format_bytes(b.saved_activations) << " | " << format_bytes(b.total()) << " | " << (fits(b) ? "yes" : "**no**")
              << " |\n";
  };
  row(phase_label("stage 1", "decoder"), s1);
  row(phase_label("phase 1", "stage 4 + decoder"), p1);
  row(phase_label("phase 2", "stages 3-4 + decoder"), p2);
  row(phase_label("phase 3 = stage 2", "everything"), s2);
  row("stage 2, batch 32 (--stage2-batch-size: half)", s2_half);
  row("stage 2, batch 64, gradient checkpointing", s2_ckpt);
  std::cout << "\nStage 2 adds, over stage 1: gradients " << format_bytes(s2.gradients - s1.gradients) << ", AdamW state "
            << format_bytes(s2.optimizer_state - s1.optimizer_state) << ", saved activations "
            << format_bytes(s2.saved_activations - s1.saved_activations)
            << " (a frozen backbone saves nothing for backward: no gradient has to flow through it).\n\n";

  std::cout << "## Before: stage 2 at batch " << batch << "\n\n" << markdown_table(s2) << "\n";
  std::cout << "## After: stage 2 at batch " << batch / 2 << " (the report's halved stage-2 batch)\n\n" << markdown_table(s2_half) << "\n";
  std::cout << "## After: stage 2 at batch " << batch << " with gradient checkpointing\n\n" << markdown_table(s2_ckpt) << "\n";

  std::cout << "## Largest batch per phase on the T4 (run time: max_micro_batch)\n\n| Phase | fp32 | AMP fp16 | AMP fp16 + checkpointing |\n|---|---:|---:|---:|\n";
  for (auto [label, prefix] : {std::pair{"stage 1", stage1}, {"phase 1", phase1}, {"phase 2", phase2}, {"stage 2", stage2}}) {
    training f = phase(prefix, 1);
    f.precision = fp32;
    std::cout << "| " << label << " | " << max_micro_batch(net, f, gpu, {1, 512}) << " | " << max_micro_batch(net, phase(prefix, 1), gpu, {1, 512})
              << " | " << max_micro_batch(net, phase(prefix, 1, true), gpu, {1, 512}) << " |\n";
  }

  const auto b2 = budget_totals(net, phase(stage2, 2), gpu);
  std::cout << "\n## Report vs computed (stage 2, batch 2)\n\n| Term | Report | Computed | Why they differ |\n|---|---|---:|---|\n"
            << "| Model weights | ~12 GB (root cause) / ~3.5 GB (breakdown) | " << format_bytes(b2.parameters)
            << " | an EdgeNeXt-S has 5.6M parameters, this stand-in " << b2.parameter_count << "; 3.5 GB of fp32 weights would be ~875M |\n"
            << "| Decoder share of gradients in stage 1 | ~20 % | " << format_percent(s1.trainable_count, s1.parameter_count) << " | - |\n"
            << "| Optimizer state | ~7.0 GB (AdamW: 2x trainable) | " << format_bytes(b2.optimizer_state)
            << " | the rule (2 fp32 states per trainable parameter) holds; the weights it doubles do not |\n"
            << "| Gradients | ~3.5 GB | " << format_bytes(b2.gradients) << " | as weights |\n"
            << "| Activations | ~2.5 GB | " << format_bytes(b2.activations_at_peak()) << " | stand-in decoder |\n"
            << "| EMA copy | not listed | " << format_bytes(b2.ema) << " | --use-ema keeps one fp32 copy |\n"
            << "| Total | ~17.5 GB; ~13 GB at batch 1 | " << format_bytes(b2.total()) << "; "
            << format_bytes(budget_totals(net, phase(stage2, 1), gpu).total()) << " at batch 1 | the report adds hand-written terms |\n\n";

  // --- the planner on the failing configuration ----------------------------------------------------
  const plan_constraints cons{.keep_effective_batch = false, .keep_architecture = true, .train_only = {phase1, phase2}};
  const auto plans = plan_fit<16>(net, phase(stage2, batch), gpu, cons);
  training report_choice = phase(phase1, batch / 2, true);  // --stage2-batch-size half, --progressive-unfreeze, --gradient-checkpointing
  const auto report = score_plan(net, phase(stage2, batch), report_choice, gpu, cons);
  std::cout << "## Planner: stage 2 at batch " << batch << " (effective batch may change, as the report's did)\n\n"
            << plan_table(plans, {{"report's choice (phase 1)", report}}) << "\n"
            << "The cheapest plan is \"" << describe_changes(plans.best(), phase(stage2, batch))
            << "\": accumulation keeps the effective batch that the report halved. The report's combination (halved batch, "
               "progressive unfreezing, checkpointing) fits with room to spare but costs "
            << report.cost << " permille: any one of its three changes fits on its own.\n";
  return plans.best().fits ? 0 : 1;
}
