// A transformers config.json read at run time (issue G item 2): the optional header
// <gpubudget/hf_config.hpp> (it needs nlohmann::json) turns the file into
// models::hf_model_config, a plain description, and models::visit_hf_model builds from it the
// model the zoo builds from a compile-time config. Checked here: the budget of the config read
// at run time equals the budget of models::llama() with the same sizes written in code, and the
// head follows "architectures" unless the program names a task.
//
//   hf_config_at_run_time [config.json]      (default: TinyLlama-1.1B's config, below)
#include <gpubudget/hf_config.hpp>
#include <gpubudget/models/hf.hpp>
#include <gpubudget/report.hpp>

#include <iostream>
#include <vector>

using namespace gpubudget;

// TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T's config.json as published on the Hugging
// Face Hub (the file benchmarks/accuracy/reference/cuda-h100/hf-configs/tinyllama-1.1b.json).
constexpr const char* tinyllama_config = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "bos_token_id": 1, "eos_token_id": 2,
  "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 5632,
  "max_position_embeddings": 2048, "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 22,
  "num_key_value_heads": 4, "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 10000.0,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.35.0", "use_cache": true, "vocab_size": 32000
})";

namespace {

/// The budget of the model `m` describes (any family, any head).
memory_budget budget_of(const models::hf_model_config& m, const training& plan, const device& d) {
  return models::visit_hf_model(m, [&](const auto& net) { return budget_totals(net, plan, d); });
}

/// TinyLlama's sizes written in code: what the config read at run time must build.
int check_against_code(const models::hf_model_config& read, const training& plan) {
  models::llama_config code{32000, 2048, 22, 32, 4, 5632, 2048, 1024, false};
  const auto from_json = budget_of(read, plan, devices::a100_80gb);
  const auto from_code = budget_totals(models::llama(code), plan, devices::a100_80gb);
  // LlamaForCausalLM: 1,100,048,384 parameters (the model card's 1.1B; the untied 32000 x 2048 head included)
  if (from_json.parameter_count != 1'100'048'384 || from_json.total() != from_code.total()) {
    std::cerr << "the config read at run time built another model: " << from_json.parameter_count << " parameters, " << from_json.total()
              << " bytes vs " << from_code.total() << "\n";
    return 1;
  }
  std::cout << "config.json and models::llama agree: " << from_json.parameter_count << " parameters, " << format_bytes(from_json.total()) << "\n\n";
  return 0;
}

/// The same checkpoint under a sequence-classification head with 3 labels: the LM head's
/// 32000 x 2048 weights go, `score` (2048 x 3) comes.
models::hf_model_config classifier_of(models::hf_model_config m) {
  m.task = models::hf_task::seq_cls;
  m.labels = 3;
  return m;
}

/// Both heads on the cards a fine-tune might get (bf16 autocast: Ampere or newer).
void compare_heads(const models::hf_model_config& m, const training& plan) {
  std::vector<labelled_budget> rows;
  for (const auto& dev : {devices::l4, devices::a10, devices::a100_40gb}) {
    rows.push_back({"causal LM", budget_of(m, plan, dev)});
    rows.push_back({"3-label classifier", budget_of(classifier_of(m), plan, dev)});
  }
  std::cout << "\n" << comparison_table(rows);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const auto cfg = argc > 1 ? hf::load_config(argv[1]) : hf::read_config(nlohmann::json::parse(tinyllama_config), "tinyllama config.json");
    auto m = cfg.model;
    const training plan{.batch = 8, .precision = amp_bf16, .optimizer = adamw, .checkpoint_blocks = true};
    const bool decoder = m.family == models::hf_family::decoder;
    if (decoder) m.llama.seq = 1024;
    // every check runs before any table is printed (the test passes on the tables)
    const auto classifier = decoder ? budget_of(classifier_of(m), plan, devices::a100_80gb) : memory_budget{};
    if (argc == 1 && (check_against_code(m, plan) != 0 || classifier.parameter_count != 1'100'048'384 - 32000 * 2048 + 2048 * 3)) return 1;
    std::cout << "## " << cfg.architecture << " (" << models::hf_task_name(m.task) << "), " << models::hf_sequence(m)
              << " tokens, batch 8, AMP bf16, checkpointed\n\n" << markdown_table(budget_of(m, plan, devices::a100_80gb)) << "\n";
    if (!decoder) return 0;
    std::cout << "## as LlamaForSequenceClassification, 3 labels: " << classifier.parameter_count << " parameters\n\n" << markdown_table(classifier);
    compare_heads(m, plan);
    return 0;
  } catch (const std::invalid_argument& e) {  // a key the builder cannot express, named
    std::cerr << e.what() << "\n";
    return 2;
  }
}
