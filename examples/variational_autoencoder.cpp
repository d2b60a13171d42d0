// A variational autoencoder, budgeted as it trains: its latent sampled, its loss the ELBO.
//
// A VAE's encoder ends in two heads, the mean and the log-variance of the latent; forward samples
// z = mu + eps · exp(logvar / 2) (the reparameterization) and returns (recon, mu, logvar), and the
// loss adds the KL divergence of N(mu, exp(logvar)) from N(0, 1) to the reconstruction term
// (pytorch/examples' vae/main.py). gaussian_latent(fc_mu, fc_var) is that block: both heads' weights,
// the noise and exp(logvar / 2) kept for z's backward, mu and logvar held for the KL term, whose
// own tensors (mu², exp(logvar)) live until backward. gpubudget-export writes it for a model whose
// forward samples so and returns (recon, mu, logvar) — measured on PyTorch 2.6's CPU step
// (tests/export, conv_vae_b2_64, vae_b2): saved bytes exact, peaks within 0.9 %.
//
// Below, AntixK/PyTorch-VAE's VanillaVAE on CelebA at 64² (configs/vae.yaml: latent 128, batch
// 64), and the same network at 128² with a sixth stage, each with Adam on a T4.
#include <gpubudget/gpubudget.hpp>

#include <iostream>
#include <vector>

using namespace gpubudget;

namespace {
constexpr auto down(std::int64_t channels) { return sequential(conv2d(channels, 3, stride(2), padding(1)), batch_norm(), leaky_relu()); }
constexpr auto up(std::int64_t channels) {
  return sequential(conv_transpose2d(channels, 3, stride(2), padding(1), output_padding(1)), batch_norm(), leaky_relu());
}
constexpr std::int64_t latent = 128;
// VanillaVAE(in_channels=3, latent_dim=128): five stages 32..512 down to [512, 2, 2], fc_mu and
// fc_var from the 2,048 features, decoder_input back to [512, 2, 2], four stages up, final_layer
constexpr auto vanilla_vae =
    sequential(input(3, 64, 64), down(32), down(64), down(128), down(256), down(512), flatten(),
               gaussian_latent(linear(latent), linear(latent)), linear(512 * 4), reshape(512, 2, 2),
               up(256), up(128), up(64), up(32), up(32), conv2d(3, 3, padding(1)), tanh());
// the same at 128² with a sixth stage (hidden dims 32..1024): [1024, 2, 2] at the bottom
constexpr auto vanilla_vae_128 =
    sequential(input(3, 128, 128), down(32), down(64), down(128), down(256), down(512), down(1024), flatten(),
               gaussian_latent(linear(latent), linear(latent)), linear(1024 * 4), reshape(1024, 2, 2),
               up(512), up(256), up(128), up(64), up(32), up(32), conv2d(3, 3, padding(1)), tanh());

constexpr auto& gpu = devices::t4;
constexpr auto plan = training{.batch = 64, .optimizer = adam};
constexpr auto vae_budget = budget_totals(vanilla_vae, plan, gpu);
constexpr auto vae_128_budget = budget_totals(vanilla_vae_128, plan, gpu);

// sum(p.numel()) of the PyTorch model (tests/export/custom_models.py conv_vae, the exporter's count)
static_assert(vae_budget.parameter_count == 3'937'635);
static_assert(fits(vae_budget) && fits(vae_128_budget));
static_assert(vae_128_budget.step_peak > vae_budget.step_peak);
constexpr auto largest = max_micro_batch_of<vanilla_vae, plan, gpu>();
constexpr auto largest_128 = max_micro_batch_of<vanilla_vae_128, plan, gpu>();
static_assert(largest >= 64 && largest_128 >= 64 && largest_128 < largest);
}  // namespace

int main() {
  std::cout << "AntixK's VanillaVAE (latent " << latent << "), batch " << plan.batch << ", Adam, on " << gpu.name << "\n\n";
  std::vector<labelled_budget> rows{{"64x64 (CelebA, as configs/vae.yaml)", vae_budget}, {"128x128, a sixth stage", vae_128_budget}};
  std::cout << comparison_table(rows) << "\n";
  std::cout << "Largest micro-batch: " << largest << " at 64x64, " << largest_128 << " at 128x128\n";
}
