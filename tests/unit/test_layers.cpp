// Hand-checkable facts about every layer family: parameter counts, output shapes, output bytes
// and what autograd saves for backward (benchmarks/accuracy/op_rules.md §1).
//
// Conventions used throughout:
//  * records are in pre-order: for sequential(input(...), A, B) the budget's layers[0] is the
//    sequential, [1] the input, [2] A, [3] B;
//  * `saved_bytes` of a record is what became saved for backward while it ran, each storage
//    counted once (a storage an earlier op saved already adds 0); the data batch counts when
//    a node keeps it;
//  * CUDA back end, fp32, plain SGD unless a test says otherwise (no CPU-only transients);
//  * B = batch, bytes = B · elements · 4 for fp32.
#include <catch2/catch.hpp>
#include <gpubudget/gpubudget.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace {
using namespace gpubudget;

constexpr training on_cuda(std::int64_t batch) {
  training t{};
  t.batch = batch;
  t.optimizer = sgd;
  return t;
}
constexpr device dev = custom_device("unit", 80 * GiB);

std::string shape_of(const detail::record_stats& r) { return gpubudget::to_string(r.output); }
}  // namespace

// --- linear --------------------------------------------------------------------------------------

TEST_CASE("linear: parameters, output, saved input", "[layers][linear]") {
  // nn.Linear(1024, 4096) on batch 8.
  constexpr auto b = budget(sequential(input(1024), linear(4096)), on_cuda(8), dev);
  // weight 1024·4096 + bias 4096 = 4,194,304 + 4,096
  REQUIRE(b.per_record[2].parameter_count == 4198400);
  REQUIRE(b.parameter_count == 4198400);
  REQUIRE(shape_of(b.per_record[2]) == "[4096]");
  // output: 8·4096·4 = 131,072 B
  REQUIRE(b.per_record[2].output_bytes == 131072);
  // op_rules §1 "Linear 2-D x[B,in]: saves x": 8·1024·4 = 32,768 B
  REQUIRE(b.per_record[2].saved_bytes == 32768);
  REQUIRE(b.saved_activations == 32768);
  // the data batch itself: 8·1024·4
  REQUIRE(b.input_batch == 32768);

  // no_bias: the weight only.
  constexpr auto nb = budget(sequential(input(1024), linear(4096, no_bias)), on_cuda(8), dev);
  REQUIRE(nb.per_record[2].parameter_count == 1024 * 4096);

  // Over the last dimension of a [197, 768] input, batch 2: out [197, 3072];
  // params 768·3072 + 3072 = 2,359,296 + 3,072; saved input 2·197·768·4 = 1,210,368 B.
  constexpr auto t = budget(sequential(input(197, 768), linear(3072)), on_cuda(2), dev);
  REQUIRE(shape_of(t.per_record[2]) == "[197,3072]");
  REQUIRE(t.per_record[2].parameter_count == 2362368);
  REQUIRE(t.per_record[2].saved_bytes == 1210368);
}

TEST_CASE("tied_linear_bias: a tied head's own bias is a parameter without a tensor of its own", "[layers][linear]") {
  // BertLMPredictionHead's decoder in miniature: its weight is the 100 x 16 word embedding table
  // (shared), its bias a [100] parameter added by the same addmm. Records: [0] sequential,
  // [1] tokens, [2] shared, [3] embedding, [4] shared, [5] tied linear, [6] the bias.
  const auto head = sequential(tokens(8), shared(1, embedding(100, 16)), shared(1, tied_linear(100)));
  const auto with_bias = sequential(tokens(8), shared(1, embedding(100, 16)), shared(1, tied_linear(100)), tied_linear_bias(100));
  const auto b = budget(with_bias, on_cuda(2), dev);
  const auto h = budget(head, on_cuda(2), dev);
  REQUIRE(b.parameter_count == 100 * 16 + 100);
  REQUIRE(b.per_record[6].parameter_count == 100);
  REQUIRE(b.per_record[6].saved_bytes == 0);
  REQUIRE(b.saved_activations == h.saved_activations);
  // the live peak grows by the bias (and at most its gradient: fp32, SGD, no state), not by a
  // tensor of logits (which would be 2 x 8 x 100 x 4 = 6,400 B)
  const auto grown = b.peak_tensor_bytes() - h.peak_tensor_bytes();
  REQUIRE(grown >= 100 * 4);
  REQUIRE(grown <= 2 * 100 * 4);
  // a feature count other than the input's is a shape error
  CHECK_THROWS_AS(budget(sequential(tokens(8), embedding(100, 16), tied_linear_bias(10)), on_cuda(2), dev), std::invalid_argument);
}

// --- convolutions ---------------------------------------------------------------------------------
// params = C_in · C_out/groups · k^dims (+ C_out bias); out = (i + 2p − d(k−1) − 1)/s + 1.

TEST_CASE("conv2d: padding, stride, dilation, groups, depthwise", "[layers][conv]") {
  // Conv2d(3, 16, 3, padding=1) on [3, 32, 32], batch 2.
  constexpr auto c = budget(sequential(input(3, 32, 32), conv2d(16, 3, padding(1))), on_cuda(2), dev);
  REQUIRE(c.per_record[2].parameter_count == 3 * 16 * 9 + 16);  // 448
  // (32 + 2 − 2 − 1)/1 + 1 = 32
  REQUIRE(shape_of(c.per_record[2]) == "[16,32,32]");
  // output 2·16·32·32·4 = 131,072 B
  REQUIRE(c.per_record[2].output_bytes == 131072);
  // saves its input (op_rules §1 "Conv2d: x (whole input storage)"): 2·3·32·32·4 = 24,576 B
  REQUIRE(c.per_record[2].saved_bytes == 24576);

  // stride 2, padding 1: (32 + 2 − 2 − 1)/2 + 1 = 15 + 1 = 16
  constexpr auto s2 = budget(sequential(input(3, 32, 32), conv2d(16, 3, stride(2), padding(1))), on_cuda(2), dev);
  REQUIRE(shape_of(s2.per_record[2]) == "[16,16,16]");
  REQUIRE(s2.per_record[2].parameter_count == 448);

  // dilation 2, no padding: (32 − 2·2 − 1)/1 + 1 = 28; params 3·8·9 + 8 = 224
  constexpr auto d2 = budget(sequential(input(3, 32, 32), conv2d(8, 3, dilation(2))), on_cuda(2), dev);
  REQUIRE(shape_of(d2.per_record[2]) == "[8,28,28]");
  REQUIRE(d2.per_record[2].parameter_count == 224);

  // groups 4, no bias: 16 · (32/4) · 9 = 1,152
  constexpr auto g4 = budget(sequential(input(16, 8, 8), conv2d(32, 3, padding(1), groups(4), no_bias)), on_cuda(2), dev);
  REQUIRE(g4.per_record[2].parameter_count == 1152);
  REQUIRE(shape_of(g4.per_record[2]) == "[32,8,8]");

  // depthwise 3×3 (groups = 16 channels): 16 · 1 · 9 + 16 = 160; channels kept
  constexpr auto dw = budget(sequential(input(16, 8, 8), depthwise_conv2d(3, padding(1))), on_cuda(2), dev);
  REQUIRE(dw.per_record[2].parameter_count == 160);
  REQUIRE(shape_of(dw.per_record[2]) == "[16,8,8]");
}

TEST_CASE("conv1d, conv3d and conv_transpose2d", "[layers][conv]") {
  // Conv1d(4, 8, 5, stride=2) on [4, 20]: (20 − 4 − 1)/2 + 1 = 7 + 1 = 8; params 4·8·5 + 8 = 168;
  // saved input 2·4·20·4 = 640 B.
  constexpr auto c1 = budget(sequential(input(4, 20), conv1d(8, 5, stride(2))), on_cuda(2), dev);
  REQUIRE(shape_of(c1.per_record[2]) == "[8,8]");
  REQUIRE(c1.per_record[2].parameter_count == 168);
  REQUIRE(c1.per_record[2].saved_bytes == 640);

  // Conv3d(2, 4, 3, padding=1) on [2, 6, 6, 6]: same size; params 2·4·27 + 4 = 220;
  // output 2·4·216·4 = 6,912 B.
  constexpr auto c3 = budget(sequential(input(2, 6, 6, 6), conv3d(4, 3, padding(1))), on_cuda(2), dev);
  REQUIRE(shape_of(c3.per_record[2]) == "[4,6,6,6]");
  REQUIRE(c3.per_record[2].parameter_count == 220);
  REQUIRE(c3.per_record[2].output_bytes == 6912);
  // stride 2 on 7³: (7 − 2 − 1)/2 + 1 = 3
  constexpr auto c3s = budget(sequential(input(2, 7, 7, 7), conv3d(4, 3, stride(2))), on_cuda(2), dev);
  REQUIRE(shape_of(c3s.per_record[2]) == "[4,3,3,3]");

  // ConvTranspose2d(4, 8, 3, stride=2, padding=1, output_padding=1) on [4, 8, 8]:
  // out = (8 − 1)·2 − 2·1 + 1·(3 − 1) + 1 + 1 = 16; weight [in, out/groups, k, k]: 4·8·9 + 8 = 296;
  // saves its input 2·4·64·4 = 2,048 B (op_rules §1 "ConvTranspose2d: x").
  constexpr auto ct = budget(sequential(input(4, 8, 8), conv_transpose2d(8, 3, stride(2), padding(1), output_padding(1))),
                             on_cuda(2), dev);
  REQUIRE(shape_of(ct.per_record[2]) == "[8,16,16]");
  REQUIRE(ct.per_record[2].parameter_count == 296);
  REQUIRE(ct.per_record[2].saved_bytes == 2048);
  // kernel 4, stride 2, padding 1 (the usual 2× upsampler): (8 − 1)·2 − 2 + 3 + 1 = 16
  constexpr auto up = budget(sequential(input(4, 8, 8), conv_transpose2d(8, 4, stride(2), padding(1))), on_cuda(2), dev);
  REQUIRE(shape_of(up.per_record[2]) == "[8,16,16]");
  REQUIRE(up.per_record[2].parameter_count == 4 * 8 * 16 + 8);
}

// --- normalization --------------------------------------------------------------------------------

TEST_CASE("batch norm: parameters, running-statistics buffers, saved set", "[layers][norm]") {
  // BatchNorm2d(8) on [8, 4, 4], batch 2.
  constexpr auto b = budget(sequential(input(8, 4, 4), batch_norm()), on_cuda(2), dev);
  REQUIRE(b.per_record[2].parameter_count == 16);  // weight + bias, one per channel
  // running_mean + running_var (8 fp32 each) + num_batches_tracked (int64): 2·8·4 + 8 = 72 B
  REQUIRE(b.buffers == 72);
  REQUIRE(b.per_record[2].buffer_bytes == 72);
  // op_rules §1 "BatchNorm2d train: x + 4 per-channel fp32 vectors":
  // x 2·8·16·4 = 1,024 + 4·8·4 = 128 → 1,152 B
  REQUIRE(b.per_record[2].saved_bytes == 1152);
  REQUIRE(b.per_record[2].output_bytes == 1024);
}

TEST_CASE("layer norm and group norm: saved input plus per-row statistics", "[layers][norm]") {
  // LayerNorm(16) on [10, 16], batch 2: params 2·16; saved x 2·10·16·4 = 1,280
  // + mean and rstd, one fp32 per row each: 2·(2·10·4) = 160 → 1,440 B. No buffers.
  constexpr auto ln = budget(sequential(input(10, 16), layer_norm()), on_cuda(2), dev);
  REQUIRE(ln.per_record[2].parameter_count == 32);
  REQUIRE(ln.buffers == 0);
  REQUIRE(ln.per_record[2].saved_bytes == 1440);

  // GroupNorm(4, 8) on [8, 4, 4], batch 2: params 2·8; saved x 1,024 + mean and rstd [B, G]
  // fp32: 2·(2·4·4) = 64 → 1,088 B.
  constexpr auto gn = budget(sequential(input(8, 4, 4), group_norm(4)), on_cuda(2), dev);
  REQUIRE(gn.per_record[2].parameter_count == 16);
  REQUIRE(gn.per_record[2].saved_bytes == 1088);
  REQUIRE(shape_of(gn.per_record[2]) == "[8,4,4]");
}

// --- embedding ------------------------------------------------------------------------------------

TEST_CASE("embedding: table parameters, int64 ids saved, dense gradient", "[layers][embedding]") {
  // Embedding(100, 8) over 16 int64 ids, batch 2.
  constexpr auto e = budget(sequential(tokens(16), embedding(100, 8)), on_cuda(2), dev);
  REQUIRE(e.per_record[2].parameter_count == 800);
  REQUIRE(shape_of(e.per_record[2]) == "[16,8]");
  REQUIRE(e.per_record[2].output_bytes == 2 * 16 * 8 * 4);  // 1,024
  // op_rules §1 "Embedding: int64 indices only": 2·16·8 = 256 B, which is also the data batch
  REQUIRE(e.per_record[2].saved_bytes == 256);
  REQUIRE(e.input_batch == 256);
  // op_rules §3: backward materializes a dense [100, 8] fp32 .grad: 3,200 B
  REQUIRE(e.gradients == 3200);
}

// --- activations ----------------------------------------------------------------------------------
// sequential(input(8), linear(16), ACT, linear(4)), batch 2:
//   x = 2·8·4 = 64 B (the data, saved by the first linear), y1 = linear output 2·16·4 = 128 B,
//   y2 = ACT output 128 B (saved by the second linear), y3 = 2·4·4 = 32 B.
// What ACT keeps (op_rules §1): relu/sigmoid/tanh/softmax its output y2 (which the next linear
// saves too: one storage), gelu/silu/leaky_relu/elu its input y1 (a second storage).

namespace {
template <class Act>
constexpr auto act_model(Act a) { return sequential(input(8), linear(16), a, linear(4)); }
}  // namespace

TEST_CASE("activations that keep their output", "[layers][activation]") {
  constexpr memory_budget keeps_output[] = {
      budget_totals(act_model(relu()), on_cuda(2), dev), budget_totals(act_model(sigmoid()), on_cuda(2), dev),
      budget_totals(act_model(gpubudget::tanh()), on_cuda(2), dev), budget_totals(act_model(softmax()), on_cuda(2), dev)};
  for (const auto& b : keeps_output) {
    // x 64 + y2 128 = 192 B
    REQUIRE(b.saved_activations == 192);
    // y1 is freed once ACT ran: y2 128 + y3 32 + loss 4 = 164 B
    REQUIRE(b.after_forward == 164);
  }
  constexpr auto r = budget(act_model(relu()), on_cuda(2), dev);
  REQUIRE(r.per_record[3].saved_bytes == 128);  // relu: its output
  REQUIRE(r.per_record[4].saved_bytes == 0);    // the next linear's input is that same storage
}

TEST_CASE("activations that keep their input", "[layers][activation]") {
  constexpr memory_budget keeps_input[] = {
      budget_totals(act_model(gelu()), on_cuda(2), dev), budget_totals(act_model(silu()), on_cuda(2), dev),
      budget_totals(act_model(leaky_relu()), on_cuda(2), dev), budget_totals(act_model(elu()), on_cuda(2), dev)};
  for (const auto& b : keeps_input) {
    // x 64 + y1 128 + y2 128 = 320 B
    REQUIRE(b.saved_activations == 320);
    // y1 + y2 + y3 + loss = 128 + 128 + 32 + 4 = 292 B
    REQUIRE(b.after_forward == 292);
  }
  constexpr auto g = budget(act_model(gelu()), on_cuda(2), dev);
  REQUIRE(g.per_record[3].saved_bytes == 128);  // gelu: its input y1
  REQUIRE(g.per_record[4].saved_bytes == 128);  // the next linear: y2, a new storage
}

TEST_CASE("in-place relu adds no tensor", "[layers][activation]") {
  constexpr auto plain = budget(act_model(relu()), on_cuda(2), dev);
  constexpr auto inplace = budget(act_model(relu_inplace()), on_cuda(2), dev);
  // relu_ keeps its result, which is y1's storage: x 64 + y1 128 = 192 B saved (as relu)
  REQUIRE(inplace.per_record[3].saved_bytes == 128);
  REQUIRE(inplace.saved_activations == 192);
  // Forward peak. relu: y1 and y2 alive together while relu runs = 256 B; later
  // y2 + y3 + the loss's x**2 (32) + loss (4) = 196 B. relu_: y1 alone (128), then 196.
  REQUIRE(plain.forward_peak == 256);
  REQUIRE(inplace.forward_peak == 196);
  REQUIRE(inplace.after_forward == 164);
}

TEST_CASE("an activation on data that needs no gradient saves nothing", "[layers][activation]") {
  // No parameter before it: nothing requires grad, so relu records no node.
  constexpr auto b = budget(sequential(input(8), relu(), linear(4)), on_cuda(2), dev);
  REQUIRE(b.per_record[2].saved_bytes == 0);
  // the linear then saves relu's output (its weight needs it): 2·8·4 = 64 B
  REQUIRE(b.per_record[3].saved_bytes == 64);
}

// --- dropout --------------------------------------------------------------------------------------

TEST_CASE("dropout: 1-byte mask on CUDA, fp32 mask on CPU, identity at 0 %", "[layers][dropout]") {
  constexpr auto drop = [](std::int64_t p) { return sequential(input(8), linear(16), dropout(p), linear(4)); };
  // CUDA: native_dropout keeps a bool mask of 2·16 elements = 32 B (not x);
  // its output y2 (128 B) is saved by the next linear. Total x 64 + 32 + 128 = 224 B.
  constexpr auto cuda = budget(drop(10), on_cuda(2), dev);
  REQUIRE(cuda.per_record[3].saved_bytes == 32);
  REQUIRE(cuda.per_record[4].saved_bytes == 128);
  REQUIRE(cuda.saved_activations == 224);
  // forward peak while dropout runs: y1 128 + y2 128 + mask 32 = 288 B
  REQUIRE(cuda.forward_peak == 288);
  // after forward: mask 32 + y2 128 + y3 32 + loss 4 = 196 B (y1 freed: nobody saved it)
  REQUIRE(cuda.after_forward == 196);

  // CPU (op_rules §0.1): x * (bernoulli(1-p)/(1-p)) keeps an fp32 mask, 2·16·4 = 128 B.
  constexpr auto cpu = budget(drop(10), cpu_reference_step(2, sgd), dev);
  REQUIRE(cpu.per_record[3].saved_bytes == 128);
  REQUIRE(cpu.saved_activations == 64 + 128 + 128);

  // p = 0 (op_rules §0.1): no mask, no copy. The next linear saves y1: x 64 + y1 128 = 192 B,
  // exactly as without the dropout (forward peak y1 + y3 + x**2 + loss = 128 + 32 + 32 + 4).
  constexpr auto zero = budget(drop(0), on_cuda(2), dev);
  constexpr auto none = budget_totals(sequential(input(8), linear(16), linear(4)), on_cuda(2), dev);
  REQUIRE(zero.per_record[3].saved_bytes == 0);
  REQUIRE(zero.saved_activations == 192);
  REQUIRE(zero.forward_peak == 196);
  REQUIRE(none.forward_peak == 196);
  REQUIRE(zero.fwd_bwd_peak == none.fwd_bwd_peak);
}

TEST_CASE("channel dropout (nn.Dropout2d): one noise value per sample and channel", "[layers][dropout]") {
  // conv2d(4, 3) on [3, 8, 8], batch 2 (y1 = 2·4·64·4 = 2,048 B), then Dropout2d(0.1): its noise
  // is [2, 4, 1, 1] in the input's type, 32 B, on CUDA and CPU alike (feature_dropout is composite)
  constexpr auto net = [](layer d) { return sequential(input(3, 8, 8), conv2d(4, 3, padding(1)), d, conv2d(4, 1)); };
  constexpr auto out = budget(net(channel_dropout(10)), on_cuda(2), dev);
  REQUIRE(out.per_record[3].saved_bytes == 32);
  REQUIRE(out.per_record[3].output_bytes == 2048);  // input * noise: a new tensor
  const auto cpu = budget(net(channel_dropout(10)), cpu_reference_step(2, sgd), dev);
  REQUIRE(cpu.per_record[3].saved_bytes == 32);
  // inplace=True: the input's storage, multiplied in place, the noise kept: y1 (kept by the next
  // conv) is the only activation-sized storage, as without the dropout
  constexpr auto inplace = budget(net(channel_dropout_inplace(10)), on_cuda(2), dev);
  constexpr auto none = budget(sequential(input(3, 8, 8), conv2d(4, 3, padding(1)), conv2d(4, 1)), on_cuda(2), dev);
  REQUIRE(inplace.per_record[3].saved_bytes == 32);
  REQUIRE(inplace.saved_activations == none.saved_activations + 32);
  // 0 % and eval: the identity
  REQUIRE(budget(net(channel_dropout(0)), on_cuda(2), dev).saved_activations == none.saved_activations);
}

// --- pooling --------------------------------------------------------------------------------------

TEST_CASE("pooling: max keeps input and int64 indices, average keeps input", "[layers][pooling]") {
  // conv2d(4, 1) on [4, 8, 8], batch 2, makes y1 = 2·4·64·4 = 2,048 B that nobody else keeps.
  constexpr auto pool = [](layer p) { return sequential(input(4, 8, 8), conv2d(4, 1), p); };
  // MaxPool2d(2): [4, 4, 4]; saves y1 2,048 + int64 indices 2·4·16·8 = 1,024 → 3,072 B
  constexpr auto mx = budget(pool(max_pool2d(2)), on_cuda(2), dev);
  REQUIRE(shape_of(mx.per_record[3]) == "[4,4,4]");
  REQUIRE(mx.per_record[3].saved_bytes == 3072);
  REQUIRE(mx.per_record[3].output_bytes == 2 * 4 * 16 * 4);  // 512
  // kernel 3, stride 2, padding 1: (8 + 2 − 3)/2 + 1 = 4
  constexpr auto mx3 = budget(pool(max_pool2d(3, stride(2), padding(1))), on_cuda(2), dev);
  REQUIRE(shape_of(mx3.per_record[3]) == "[4,4,4]");
  REQUIRE(mx3.per_record[3].saved_bytes == 3072);
  // ceil_mode=True (ATen's pooling_output_shape): kernel 3, stride 2 on 8: (8 − 3 + 1)/2 + 1 = 4
  // where floor gives 3; on 112 (a stem's map) 56 where floor gives 55
  constexpr pool2d_op ceil3{3, 2, 0, false, true}, floor3{3, 2, 0, false, false};
  static_assert(ceil3.output_shape(make_shape(4, 8, 8))[1] == 4 && floor3.output_shape(make_shape(4, 8, 8))[1] == 3);
  static_assert(ceil3.output_shape(make_shape(64, 112, 112))[1] == 56 && floor3.output_shape(make_shape(64, 112, 112))[1] == 55);
  // the last window must start inside the input or its left padding: kernel 2, stride 2, padding 1
  // on 5 gives 3 (the fourth window would start at 6 >= 5 + 1), as PyTorch's MaxPool2d does
  constexpr pool2d_op edge{2, 2, 1, false, true};
  static_assert(edge.output_shape(make_shape(1, 5, 5))[1] == 3);
  // x.mean([2, 3]) (MnasNet's global pooling): mean_over(1, 2) on [4, 8, 8] gives [4] and keeps
  // nothing in PyTorch 2.x (like a global adaptive average pool)
  constexpr auto mean23 = budget(pool(mean_over(1, 2)), on_cuda(2), dev);
  REQUIRE(shape_of(mean23.per_record[3]) == "[4]");
  REQUIRE(mean23.per_record[3].saved_bytes == 0);
  constexpr auto ceil_net = budget(pool(max_pool2d(3, stride(2), padding(0), ceil_mode)), on_cuda(2), dev);
  REQUIRE(shape_of(ceil_net.per_record[3]) == "[4,4,4]");
  // AvgPool2d(2) keeps its whole input (op_rules §0.7): 2,048 B. Global AdaptiveAvgPool2d is
  // mean(-1, -2): its input in 1.13 (§0.7), nothing in PyTorch 2.x, CUDA included (2.6 #3)
  constexpr auto avg = budget(pool(avg_pool2d(2)), on_cuda(2), dev);
  REQUIRE(avg.per_record[3].saved_bytes == 2048);
  constexpr auto gap = budget(pool(adaptive_avg_pool2d(1, 1)), on_cuda(2), dev);
  REQUIRE(shape_of(gap.per_record[3]) == "[4,1,1]");
  REQUIRE(gap.per_record[3].saved_bytes == 0);
  const auto gap113 = budget(pool(adaptive_avg_pool2d(1, 1)), cpu_reference_step(2, optimizer_kind::adamw), dev);
  REQUIRE(gap113.per_record[3].saved_bytes == 2048);
}

TEST_CASE("1-D pooling: the 2-D pools on x.unsqueeze(-2)", "[layers][pooling]") {
  // conv1d(4, 1) on [4, 64], batch 2: y1 = 2·4·64·4 = 2,048 B, kept by the pool only.
  // tests/export's audio_cnn_b2_4000 (custom-pytorch-2.6-cpu.json) holds all three to a measured step.
  constexpr auto pool = [](layer p) { return sequential(input(4, 64), conv1d(4, 1), p); };
  // MaxPool1d(2): [4, 32]; y1 + int64 indices 2·4·32·8 = 2,048 → 4,096 B
  constexpr auto mx = budget(pool(max_pool1d(2)), on_cuda(2), dev);
  REQUIRE(shape_of(mx.per_record[3]) == "[4,32]");
  REQUIRE(mx.per_record[3].saved_bytes == 4096);
  // kernel 3, stride 2, ceil_mode on 64: (64 − 3 + 1)/2 + 1 = 32 (floor: 31); padding 1: 32
  static_assert(pool2d_op{3, 2, 0, false, true, true}.output_shape(make_shape(4, 64))[1] == 32);
  static_assert(pool2d_op{3, 2, 0, false, false, true}.output_shape(make_shape(4, 64))[1] == 31);
  REQUIRE(shape_of(budget(pool(avg_pool1d(3, stride(2), padding(1))), on_cuda(2), dev).per_record[3]) == "[4,32]");
  // AvgPool1d keeps its input; AdaptiveAvgPool1d(1) is a mean in 2.x (nothing), its input in 1.13
  REQUIRE(budget(pool(avg_pool1d(2)), on_cuda(2), dev).per_record[3].saved_bytes == 2048);
  constexpr auto gap = budget(pool(adaptive_avg_pool1d(1)), on_cuda(2), dev);
  REQUIRE(shape_of(gap.per_record[3]) == "[4,1]");
  REQUIRE(gap.per_record[3].saved_bytes == 0);
  REQUIRE(budget(pool(adaptive_avg_pool1d(1)), cpu_reference_step(2, optimizer_kind::adamw), dev).per_record[3].saved_bytes == 2048);
  REQUIRE(budget(pool(adaptive_avg_pool1d(8)), on_cuda(2), dev).per_record[3].saved_bytes == 2048);
  // without grad on the CPU, max_pool1d makes no indices (MaxPooling.cpp): the forward peak is
  // y1 and the output only
  training cpu_inference = cpu_reference_step(2, optimizer_kind::adamw);
  cpu_inference.inference = true;
  const auto with_grad = budget(pool(max_pool1d(2)), cpu_reference_step(2, optimizer_kind::adamw), dev);
  const auto without = budget(pool(max_pool1d(2)), cpu_inference, dev);
  REQUIRE(without.forward_peak < with_grad.forward_peak);
  // a 1-D pool on [C, H, W] is a rank error, not silently another pool: tests/fail/pool1d_on_image_ko.cpp
}

TEST_CASE("padding, GLU, adaptive max pooling and log-softmax keep what PyTorch keeps", "[layers][pooling]") {
  // conv1d(4, 1) on [4, 64], batch 2: y1 = 2·4·64·4 = 2,048 B. tests/export's gated_tcn_b2_2000
  // and metric_embedding_b2_64 (custom-pytorch-2.6-cpu.json) hold these ops to measured steps.
  constexpr auto after = [](layer op) { return sequential(input(4, 64), conv1d(4, 1), op); };
  // ReflectionPad1d(2) keeps its input; ZeroPad1d nothing: [4, 68] either way
  constexpr auto reflect = budget(after(pad(2, 2, 0, 0, pad_mode::reflect)), on_cuda(2), dev);
  REQUIRE(shape_of(reflect.per_record[3]) == "[4,68]");
  REQUIRE(reflect.per_record[3].saved_bytes == 2048);
  REQUIRE(budget(after(pad(2, 2, 0, 0)), on_cuda(2), dev).per_record[3].saved_bytes == 0);
  // CPU autocast runs reflection and replication pads in fp32 (its fp32 list): the pad keeps the
  // fp32 copy of the bf16 conv output (2,048 B, not 1,024); CUDA autocast keeps the bf16 input
  training cpu_bf16 = cpu_reference_step(2, optimizer_kind::adamw, runtime_kind::torch2_6_cpu);
  cpu_bf16.precision = precision_mode::amp_bf16;
  training cuda_bf16 = on_cuda(2);
  cuda_bf16.precision = precision_mode::amp_bf16;
  REQUIRE(budget(after(pad(1, 1, 0, 0, pad_mode::replicate)), cpu_bf16, dev).per_record[3].saved_bytes == 2048);
  REQUIRE(budget(after(pad(1, 1, 0, 0, pad_mode::replicate)), cuda_bf16, dev).per_record[3].saved_bytes == 1024);
  // GLU over the channels: [2, 64], keeps its input
  constexpr auto gated = budget(after(glu(0)), on_cuda(2), dev);
  REQUIRE(shape_of(gated.per_record[3]) == "[2,64]");
  REQUIRE(gated.per_record[3].saved_bytes == 2048);
  // AdaptiveMaxPool1d(8): the input and int64 indices 2·4·8·8 = 512 B; AdaptiveAvgPool1d(8) the input
  constexpr auto amax = budget(after(adaptive_max_pool1d(8)), on_cuda(2), dev);
  REQUIRE(shape_of(amax.per_record[3]) == "[4,8]");
  REQUIRE(amax.per_record[3].saved_bytes == 2048 + 512);
  REQUIRE(budget(after(adaptive_avg_pool1d(8)), on_cuda(2), dev).per_record[3].saved_bytes == 2048);
  // log_softmax keeps its output, softmax's rule: 2,048 B
  REQUIRE(budget(after(log_softmax()), on_cuda(2), dev).per_record[3].saved_bytes == 2048);
}

TEST_CASE("ConvNeXt's LayerNorm written out and its (C,) layer scale on channels-last", "[layers][norm]") {
  // conv2d(8, 1) on [8, 4, 4], batch 2: y1 = 2·8·4·4·4 = 1,024 B. facebookresearch/ConvNeXt's
  // channels_first LayerNorm keeps x − u twice, the normalized x and sqrt's [1, 4, 4] output:
  // 3 · 1,024 + 128 B (saved_tensors_hooks); nn.LayerNorm over the channels' 1,024 + 2 · 128.
  // tests/export's official_convnext_b2_64: saved exact
  const auto net = [](layer norm) { return sequential(input(8, 4, 4), conv2d(8, 1), norm); };
  const auto conv_only = budget_totals(net(scale()), on_cuda(2), dev).saved_activations;  // the conv keeps the input only
  const auto written = budget_totals(net(written_layer_norm()), on_cuda(2), dev);
  CHECK(written.parameter_count == budget_totals(net(scale()), on_cuda(2), dev).parameter_count + 2 * 8);
  CHECK(written.saved_activations - conv_only == 3 * 1024 + 128);
  // the official Block's `self.gamma * x` on channels-last [4, 4, 8]: 8 weights (the last
  // dimension's), x kept; torchvision's (C, 1, 1) form on [8, 4, 4] the same
  const auto last = budget(sequential(input(8, 4, 4), conv2d(8, 1), permute(1, 2, 0), layer_scale(true)), on_cuda(2), dev);
  CHECK(last.per_record[4].parameter_count == 8);
  CHECK(budget(sequential(input(8, 4, 6), conv2d(8, 1), permute(1, 2, 0), layer_scale(true)), on_cuda(2), dev).per_record[4].parameter_count == 8);
  CHECK(budget(sequential(input(8, 4, 6), conv2d(8, 1), layer_scale()), on_cuda(2), dev).per_record[3].parameter_count == 8);
}

TEST_CASE("normalize and LayerNorm over several dimensions", "[layers][norm]") {
  constexpr auto after = [](layer op) { return sequential(input(4, 8, 8), conv2d(4, 1), op); };  // y1: 2·4·8·8·4 = 2,048 B
  // F.normalize(y1, dim=1): the norm and its clamp, [2, 1, 8, 8] fp32 = 512 B each, kept beside y1
  constexpr auto n = budget(after(normalize(0)), on_cuda(2), dev);
  REQUIRE(n.per_record[3].saved_bytes == 2048 + 2 * 512);
  // under CUDA autocast the norm is fp32 (linalg_vector_norm's fp32_set_opt_dtype) and so is
  // y1 / norm: the output has 2·4·8·8·4 = 2,048 B of an fp32 tensor, not 1,024 of bf16
  training cuda_bf16 = on_cuda(2);
  cuda_bf16.precision = precision_mode::amp_bf16;
  const auto n16 = budget(after(normalize(0)), cuda_bf16, dev);
  REQUIRE(n16.per_record[3].output_bytes == 2048);
  REQUIRE(n16.per_record[3].saved_bytes == 1024 + 2 * 512);
  // LayerNorm([4, 8, 8]): weight and bias of 256 each, mean and rstd one fp32 per sample (2 · 8 B);
  // over the last dimension only: [8] each, one row per (sample, channel, row): 2 · 2·4·8·4 B
  constexpr auto whole = budget(after(layer_norm(over_last(3))), on_cuda(2), dev);
  REQUIRE(whole.per_record[3].parameter_count == 2 * 256);
  REQUIRE(whole.per_record[3].saved_bytes == 2048 + 2 * 8);
  constexpr auto last = budget(after(layer_norm()), on_cuda(2), dev);
  REQUIRE(last.per_record[3].parameter_count == 2 * 8);
  REQUIRE(last.per_record[3].saved_bytes == 2048 + 2 * 256);
  // mean and sum with keepdim: [4, 1, 1]; sum keeps nothing, 2.x's mean nothing either
  constexpr auto kept = budget(after(mean_over(1, 2, keepdim)), on_cuda(2), dev);
  REQUIRE(shape_of(kept.per_record[3]) == "[4,1,1]");
  REQUIRE(shape_of(budget(after(sum_over(0)), on_cuda(2), dev).per_record[3]) == "[8,8]");
}

TEST_CASE("2.6 CPU: 3-D and transposed convolutions' oneDNN transients (op_rules 2.6 #51-#53)", "[layers][conv][cpu]") {
  // against benchmarks/accuracy/conv3d_probe.py's measurements (2 threads): within 10 %
  const auto near = [](std::int64_t estimate, std::int64_t measured) { return estimate * 10 >= measured * 9 && estimate * 10 <= measured * 11; };
  // Conv3d(8, 8, 3, padding=1) on [2, 8, 16, 64, 64]: X = Y = 4,194,304. Fewer than 16 channels:
  // the input stays plain, the output computes in 16-channel blocks (Yp = 2Y): forward 2Y
  // (8,407,224 measured), backward Yp + Xp - X = 3X (12,628,488)
  const auto small = detail::cpu_conv3d_transients({4194304, 4194304, 6912, 8, 8, 27, 3, 16, 16 * 64 * 64}, true, 2);
  CHECK(small.forward == 2 * 4194304);
  CHECK(near(small.forward, 8407224));
  CHECK(near(small.backward, 12628488));
  // Conv3d(16, 8): the input reordered to blocks (X), the output padded: forward X + Yp - Y
  // (12,641,648), backward Yp + Xp (16,870,384)
  const auto mixed = detail::cpu_conv3d_transients({8388608, 4194304, 13824, 16, 8, 27, 3, 16, 16 * 64 * 64}, true, 2);
  CHECK(near(mixed.forward, 12641648));
  CHECK(near(mixed.backward, 16870384));
  // Conv3d(512, 512, 3, padding=1) on [2, 512, 1, 4, 4]: the kernel's 3 frames over 1 take
  // oneDNN's gemm weight gradient, 4·W per thread (#51): 228,441,464 measured (2 threads)
  const auto deep = detail::cpu_conv3d_transients({65536, 65536, 28311552, 512, 512, 27, 3, 1, 16}, true, 2);
  CHECK(near(deep.backward, 228441464));
  CHECK(detail::cpu_conv3d_transients({65536, 65536, 28311552, 512, 512, 27, 3, 1, 16}, true, 4).backward > 2 * deep.backward - 4 * 65536);
  // at 4 frames the direct kernel: no gemm term (Conv3d(128, 128) at 4x16x16: 1.2 W measured)
  CHECK(detail::cpu_conv3d_transients({1048576, 1048576, 1769472, 128, 128, 27, 3, 4, 1024}, true, 2).backward == 2 * 1048576);
  // ConvTranspose1d(32, 16, 4, stride 4) on [2, 32, 1000]: X = 256,000, Y = 512,000: forward
  // max(2X + Y, 2Y) (1,033,408 measured), backward X + Y (824,688); 1.13's 4.5·Y and 5·Y
  const auto up = detail::cpu_conv_transpose_transients(256000, 512000, 8192, true);
  CHECK(near(up.forward, 1033408));
  CHECK(near(up.backward, 824688));
  CHECK(detail::cpu_conv_transpose_transients(256000, 512000, 8192, false).backward == 5 * 512000);
  // ConvTranspose3d(64, 64, 4, 2, 1) on [2, 64, 4, 4, 4]: the weight (1,048,576 B) dominates:
  // forward Y + W (1,259,504 measured), backward W (1,070,696)
  const auto wide = detail::cpu_conv_transpose_transients(32768, 262144, 1048576, true);
  CHECK(near(wide.forward, 1259504));
  CHECK(near(wide.backward, 1070696));
}

TEST_CASE("a transposed embedding: conv1d's contiguous copies on the 2.6 CPU, the embedding's gradient copy (op_rules 2.6 #56, #57)", "[layers][conv][cpu]") {
  // A text CNN: Conv1d over embedding(ids).transpose(1, 2), a [256, 64] input with its channels
  // adjacent in memory. The 2.6 CPU runs the conv on a contiguous copy of it (X = 2·256·64·4 =
  // 131,072 B), in forward and in backward (conv1d_layout_probe.py: +X over the contiguous input, 9 shapes)
  const auto cnn = [](auto... conv_options) { return sequential(tokens(64), embedding(1000, 256), transpose(0, 1), conv1d(8, 1, conv_options...)); };
  constexpr std::int64_t X = 2 * 256 * 64 * 4;
  const auto cpu26 = cpu_reference_step(2, optimizer_kind::adamw, runtime_kind::torch2_6_cpu);
  CHECK(budget_totals(cnn(channels_last_input), cpu26, dev).forward_peak - budget_totals(cnn(), cpu26, dev).forward_peak == X);
  // the 1.13 CPU was not measured, and cuDNN reads the layout in place (it needs no copy)
  const auto cpu113 = cpu_reference_step(2, optimizer_kind::adamw, runtime_kind::torch1_13_cpu);
  CHECK(budget_totals(cnn(channels_last_input), cpu113, dev).forward_peak == budget_totals(cnn(), cpu113, dev).forward_peak);
  CHECK(budget_totals(cnn(channels_last_input), on_cuda(2), dev).forward_peak == budget_totals(cnn(), on_cuda(2), dev).forward_peak);
  // embedding_dense_backward makes its incoming gradient contiguous: through the transpose it is
  // strided, so the backward of a large table (its 25.6 MB gradient: the step's peak) holds a copy
  // of it, 2·64·64·4 B, on any device (trace_peak.py text_cnn_b16_t64: 263,216 B above the gradient)
  const auto strided = budget_totals(sequential(tokens(64), embedding(100000, 64), transpose(0, 1), conv1d(4, 1)), on_cuda(2), dev);
  const auto plain = budget_totals(sequential(tokens(64), embedding(100000, 64), conv1d(4, 1)), on_cuda(2), dev);
  CHECK(strided.fwd_bwd_peak - plain.fwd_bwd_peak == 2 * 64 * 64 * 4);
  CHECK(strided.after_forward == plain.after_forward);
}

TEST_CASE("2.6 CPU: oneDNN's 16-channel blocks in 2-D convolutions (op_rules 2.6 #58)", "[layers][conv][cpu]") {
  const auto cpu26 = cpu_reference_step(2, optimizer_kind::adamw, runtime_kind::torch2_6_cpu);
  // A U-Net's last 1x1 conv, 16 channels -> 2 or 16 classes on 64², batch 2 (X = 524,288 B). Its
  // backward holds the output's gradient padded to 16 channels, X + Yp = 2X for both (1,102,120
  // and 1,101,024 B measured, conv_channel_blocks_probe.py): at that backward, the step's peak,
  // 16 classes hold only their larger output and its gradient more, 2 · 14 channels' worth.
  const auto head = [](std::int64_t classes) { return sequential(input(16, 64, 64), conv2d(16, 3, padding(1)), relu(), conv2d(classes, 1)); };
  constexpr std::int64_t channels14 = 2 * 14 * 64 * 64 * 4;
  const auto more = budget_totals(head(16), cpu26, dev).fwd_bwd_peak - budget_totals(head(2), cpu26, dev).fwd_bwd_peak;
  CHECK(more >= 2 * channels14);
  CHECK(more <= 2 * channels14 + 1024);  // the weight's and bias's 14 more rows
  // DCGAN's first ConvTranspose2d(100, 256, 4) on the [100, 1, 1] latent: its weight held with
  // 112 input channels, as a 112-channel latent's would be: the same forward peak (measured:
  // 1,853,696 B above the output, Y + Wp = 1,867,776)
  const auto latent = [](std::int64_t z) { return sequential(input(z, 1, 1), conv_transpose2d(256, 4, no_bias)); };
  const auto z100 = budget_totals(latent(100), cpu26, dev);
  CHECK(z100.forward_peak == budget_totals(latent(112), cpu26, dev).forward_peak);
  CHECK(z100.forward_peak >= 1853696 + 32768);
  CHECK(z100.forward_peak <= (1853696 + 32768) * 102 / 100);
}

TEST_CASE("Karpathy's per-head attention: a Linear per head for each of q, k, v, each head's causal mask kept", "[layers][attention]") {
  // D = 64, 4 heads of 16 over 32 tokens, batch 2, after a Linear: the heads' 12 Linears without a
  // bias (64·16 each) and proj (64·64 + 64)
  const auto net = sequential(input(32, 64), linear(64), attention(64, heads(4), attention_impl::per_head, qkv_bias(false)));
  const auto b = budget(net, on_cuda(2), dev);
  REQUIRE(b.per_record[3].parameter_count == 12 * 64 * 16 + 64 * 64 + 64);
  // saved, per head: q and k (2·32·16·4 = 4,096 B each, no copies: [L, d] contiguous), the
  // probabilities (2·32·32·4 = 8,192), the bool [32, 32] mask (1,024, once per head whatever
  // the batch), v (4,096); then the cat (2·32·64·4 = 16,384) kept by proj. The input is the
  // Linear's output, kept by the heads (16,384). tests/export's karpathy_gpt_b2_t256: exact
  constexpr std::int64_t per_head = 3 * 4096 + 8192 + 1024;
  REQUIRE(b.per_record[3].saved_bytes == 16384 + 4 * per_head + 16384);
  // the masks do not grow with the batch: batch 4 keeps twice the rest and the same masks
  REQUIRE(budget(net, on_cuda(4), dev).per_record[3].saved_bytes == 2 * (16384 + 4 * (per_head - 1024) + 16384) + 4 * 1024);
  // 65 heads: more than the library holds before it concatenates them
  REQUIRE_THROWS_AS(budget(sequential(input(32, 65), attention(65, heads(65), attention_impl::per_head)), on_cuda(2), dev), std::invalid_argument);
}

TEST_CASE("flash attention with one packed q, k, v projection (timm's Attention): one autocast copy of its input", "[layers][attention]") {
  // 64 tokens x 96 (4 heads) after a LayerNorm (fp32 under CUDA autocast), batch 2: the same
  // parameters as q + packed kv; the packed Linear casts its input once, q's and kv's Linears once
  // each: one bf16 [64, 96] copy fewer
  // saved (2·64·96·2 = 24,576 B). tests/export's timm_style_vit_b2_64 under CPU autocast: +3.35 %
  // saved with two projections, exact with one.
  const auto net = [](layer attn) { return sequential(input(64, 96), linear(96), layer_norm(), attn); };
  training amp = on_cuda(2);
  amp.precision = precision_mode::amp_bf16;
  const auto two = budget(net(attention(96, heads(4), attention_impl::flash)), amp, dev);
  const auto one = budget(net(attention(96, heads(4), attention_impl::flash, fused_qkv)), amp, dev);
  REQUIRE(one.per_record[4].parameter_count == two.per_record[4].parameter_count);
  REQUIRE(two.per_record[4].saved_bytes - one.per_record[4].saved_bytes == 2 * 64 * 96 * 2);
  // fp32: no cast, the same bytes
  REQUIRE(budget(net(attention(96, heads(4), attention_impl::flash, fused_qkv)), on_cuda(2), dev).per_record[4].saved_bytes ==
          budget(net(attention(96, heads(4), attention_impl::flash)), on_cuda(2), dev).per_record[4].saved_bytes);
}

// --- views ----------------------------------------------------------------------------------------

TEST_CASE("flatten, reshape, transpose and permute are views: no new bytes", "[layers][views]") {
  // Batch 2: x = y1 = 2·16·4 = 128 B, y3 = 2·4·4 = 32 B; linear params 16·16+16 = 272 and 16·4+4 = 68.
  constexpr auto base = budget_totals(sequential(input(16), linear(16), linear(4)), on_cuda(2), dev);
  constexpr auto viewed = budget(sequential(input(16), linear(16), reshape(2, 8), transpose(0, 1), permute(1, 0),
                                            flatten(), linear(4)),
                                 on_cuda(2), dev);
  REQUIRE(shape_of(viewed.per_record[3]) == "[2,8]");
  REQUIRE(shape_of(viewed.per_record[4]) == "[8,2]");
  REQUIRE(shape_of(viewed.per_record[5]) == "[2,8]");
  REQUIRE(shape_of(viewed.per_record[6]) == "[16]");
  for (int i = 3; i <= 6; ++i) {
    REQUIRE(viewed.per_record[static_cast<std::size_t>(i)].saved_bytes == 0);
    REQUIRE(viewed.per_record[static_cast<std::size_t>(i)].parameter_count == 0);
  }
  // saved x 128 + y1 128 = 256; after forward y1 + y3 + loss = 164; forward peak + x**2 32 = 196.
  // Backward (fwd_bwd_peak): the second linear's node allocates grad y1 (128) and its weight
  // grads (68·4 = 272) while y3, loss and grad y3 (32) live: 32+4+32+128+128(y1)+272 = 596;
  // then the first linear's weight grads (272·4 = 1,088) arrive with y3, loss, grad y1 and
  // 272 alive: 32 + 4 + 128 + 272 + 1,088 = 1,524 B.
  for (const memory_budget& b : {base, static_cast<const memory_budget&>(viewed)}) {
    REQUIRE(b.saved_activations == 256);
    REQUIRE(b.after_forward == 164);
    REQUIRE(b.forward_peak == 196);
    REQUIRE(b.fwd_bwd_peak == 1524);
  }
  // transpose(..., contiguous) copies: while the copy is made, y1 and its copy (128 B each) are
  // both alive: forward peak 256 B; after forward unchanged (y1 is freed, the copy saved).
  constexpr auto copied = budget_totals(sequential(input(16), linear(16), reshape(2, 8), transpose(0, 1, true), flatten(),
                                                   linear(4)),
                                        on_cuda(2), dev);
  REQUIRE(copied.forward_peak == 256);
  REQUIRE(copied.after_forward == 164);
  REQUIRE(copied.saved_activations == 256);
}

TEST_CASE("narrow: a slice view, or its contiguous copy (locuslab/TCN's Chomp1d)", "[layers][views]") {
  // conv1d(4, 3, padding(2)) on [4, 16], batch 2: [4, 18] (2·4·18·4 = 576 B); x[:, :, :-2] is [4, 16]
  const auto chomp = [](bool contiguous) { return sequential(input(4, 16), conv1d(4, 3, padding(2)), narrow(1, 0, 16, contiguous), gelu()); };
  const auto view = budget(chomp(false), on_cuda(2), dev), copied = budget(chomp(true), on_cuda(2), dev);
  REQUIRE(shape_of(view.per_record[3]) == "[4,16]");
  // GELU keeps its input: the view keeps its base (the whole conv output), the copy only itself
  REQUIRE(view.saved_activations - copied.saved_activations == 576 - 2 * 4 * 16 * 4);
  REQUIRE_THROWS_AS(budget(sequential(input(4, 16), narrow(1, 10, 8)), on_cuda(2), dev), std::invalid_argument);
}

TEST_CASE("matmul of two branches (torch.bmm): SAGAN's attention map and its scalar gamma", "[layers][merge]") {
  // from [16, 8, 8] at batch 2: q = conv2d(2, 1)(x).view(2, 64).permute(1, 0) [64, 2], k = conv2d(2, 1)(x).view(2, 64)
  // [2, 64]; energy = bmm(q, k) [64, 64]. BmmBackward0 keeps both operands: the two conv outputs
  // (q's permuted view keeps its base), 2·2·64·4 = 1,024 B each; the convs keep x (8,192 B)
  const auto query = sequential(conv2d(2, 1), reshape(2, 64), permute(1, 0));
  const auto key = sequential(conv2d(2, 1), reshape(2, 64));
  const auto energy = budget(sequential(input(16, 8, 8), parallel(merge_kind::matmul, query, key)), on_cuda(2), dev);
  REQUIRE(shape_of(energy.per_record[2]) == "[64,64]");
  REQUIRE(energy.saved_activations == 8192 + 2 * 1024);
  // FLOPs a sample: the two 1x1 convs (2·16·2·64 each) and 2·k per output element, k = 2
  CHECK(subtree_flops(energy, 2, make_shape(16, 8, 8), on_cuda(2), false, false).total == 2 * (2 * 16 * 2 * 64) + 2 * 2 * 64 * 64);
  // + softmax (its output kept, 2·64·64·4 = 32,768 B), then out = bmm(v [16, 64], attentionᵀ): v kept
  // (8,192 B) beside the probabilities' view; gamma · out + x: one weight, out kept (8,192 B)
  const auto attention = sequential(parallel(merge_kind::matmul, query, key), softmax(), permute(1, 0));
  const auto sagan = sequential(input(16, 8, 8), residual(parallel(merge_kind::matmul, sequential(conv2d(16, 1), reshape(16, 64)), attention),
                                                          reshape(16, 8, 8), scalar_gain()));
  const auto b = budget(sagan, on_cuda(2), dev);
  REQUIRE(shape_of(b.per_record[2]) == "[16,8,8]");
  CHECK(b.parameter_count == 2 * (2 * 16 + 2) + (16 * 16 + 16) + 1);  // q, k, v 1x1 convs and gamma
  CHECK(b.saved_activations == 8192 + 2 * 1024 + 32768 + 8192 + 8192);
  // three branches, a rank other than 2, inner dimensions that differ: errors
  CHECK_THROWS_AS(budget(sequential(input(16, 8, 8), parallel(merge_kind::matmul, query, key, key)), on_cuda(2), dev), std::invalid_argument);
  CHECK_THROWS_AS(budget(sequential(input(16, 8, 8), parallel(merge_kind::matmul, sequential(), sequential())), on_cuda(2), dev),
                  std::invalid_argument);
  CHECK_THROWS_AS(budget(sequential(input(16, 8, 8), parallel(merge_kind::matmul, key, key)), on_cuda(2), dev), std::invalid_argument);
}

TEST_CASE("weight_norm on a convolution: g per output channel, w kept in place of the weight", "[layers][conv]") {
  // conv1d(16, 3) on [8, 32] at batch 2: the weight v has 16·8·3 = 384 values (1,536 B), g 16
  const auto with = [](auto... o) { return sequential(input(8, 32), conv1d(16, 3, o...), relu()); };
  const auto plain = budget_totals(with(), on_cuda(2), dev);
  const auto param = budget_totals(with(weight_norm_parametrization), on_cuda(2), dev);
  const auto hook = budget_totals(with(weight_norm), on_cuda(2), dev);
  CHECK(param.parameter_count == plain.parameter_count + 16);
  CHECK(hook.parameter_count == plain.parameter_count + 16);
  // the convolution keeps w (1,536 B) and WeightNormInterfaceBackward0 the norms (64 B) either way
  CHECK(param.saved_activations == plain.saved_activations + 1536 + 64);
  CHECK(hook.saved_activations == plain.saved_activations + 1536 + 64);
  // the hook's w stays on the module between steps: resident; the parametrization's does not
  CHECK(hook.buffers == plain.buffers + 1536);
  CHECK(param.buffers == plain.buffers);
  // a transposed convolution's g follows its dim 0, the input channels
  CHECK(budget_totals(sequential(input(8, 32), conv_transpose1d(16, 4, stride(2), weight_norm)), on_cuda(2), dev).parameter_count ==
        8 * 16 * 4 + 16 + 8);
}

TEST_CASE("elementwise math and a - b: what autograd keeps", "[layers][elementwise]") {
  // after linear(16) on [16] at batch 2: y1 = 2·16·4 = 128 B; each op's output is 128 B too
  const auto after = [](layer op) { return budget(sequential(input(16), linear(16), op), on_cuda(2), dev).per_record[3]; };
  CHECK(after(elementwise(unary_fn::exp)).saved_bytes == 128);  // the output
  CHECK(after(elementwise(unary_fn::log)).saved_bytes == 128);  // the input
  CHECK(after(elementwise(unary_fn::neg)).saved_bytes == 0);
  CHECK(after(elementwise(unary_fn::pow)).saved_bytes == 128);
  // CUDA autocast fp16: exp runs on an fp32 copy (autocast's fp32 list) and keeps its fp32
  // output; abs stays 16-bit and keeps its 16-bit input
  training amp = on_cuda(2);
  amp.precision = precision_mode::amp_fp16;
  const auto amp_after = [&](layer op) { return budget(sequential(input(16), linear(16), op), amp, dev).per_record[3]; };
  CHECK(amp_after(elementwise(unary_fn::exp)).output_bytes == 128);
  CHECK(amp_after(elementwise(unary_fn::abs)).saved_bytes == 64);
  // gelu_new, GPT-2's tanh formula written out: x (pow), tanh's output, 1 + tanh and 0.5·x kept,
  // where F.gelu keeps x alone; under autocast pow's fp32 copy of x, tanh and 1 + tanh in fp32,
  // 0.5·x in fp16 (448 B), and the product comes out fp32
  CHECK(after(gelu_new()).saved_bytes == 4 * 128);
  CHECK(after(gelu()).saved_bytes == 128);
  CHECK(amp_after(gelu_new()).saved_bytes == 3 * 128 + 64);
  CHECK(amp_after(gelu_new()).output_bytes == 128);
  // x - 2x keeps nothing, as x + 2x (b's gradient, -grad, is a new tensor: tests/export's
  // difference_cnn_b2_64 holds it, trace_peak.py op 56 aten.neg); shapes must agree
  const auto join = [](merge_kind m) {
    return budget(sequential(input(16, 1024), layer_scale(true), parallel(m, sequential(), scale())), on_cuda(2), dev);
  };
  CHECK(join(merge_kind::subtract).saved_activations == join(merge_kind::add).saved_activations);
  CHECK(shape_of(join(merge_kind::subtract).per_record[3]) == "[16,1024]");
  // the second operand may broadcast against the first (x - x.mean(-1, keepdim=True)), not the
  // first against the second, and a dimension other than 1 must agree
  CHECK(shape_of(budget(sequential(input(16, 1024), parallel(merge_kind::subtract, sequential(), mean_over(1, 1, keepdim))), on_cuda(2), dev)
                     .per_record[2]) == "[16,1024]");
  CHECK_THROWS_AS(budget(sequential(input(16, 1024), parallel(merge_kind::subtract, mean_over(1, 1, keepdim), sequential())), on_cuda(2), dev),
                  std::invalid_argument);
  CHECK_THROWS_AS(budget(sequential(input(16, 1024), parallel(merge_kind::subtract, sequential(), linear(512))), on_cuda(2), dev),
                  std::invalid_argument);
}

TEST_CASE("tensors on both sides: a quotient, a maximum, a broadcast difference, var, std, a learned bias", "[layers][elementwise]") {
  // on y = layer_scale(true)([16, 256]) at batch 2: y is 2·16·256·4 = 32 KiB, a reduced [16, 1] 128 B
  constexpr std::int64_t Y = 2 * 16 * 256 * 4, R = 2 * 16 * 4;
  const auto on_y = [](auto... ops) { return budget(sequential(input(16, 256), layer_scale(true), ops...), on_cuda(2), dev); };
  // var keeps its input, std its input and its result (derivatives.yaml var/std.correction)
  CHECK(on_y(var_over(1, 1, keepdim)).per_record[3].saved_bytes == Y);
  CHECK(on_y(std_over(1, 1, keepdim)).per_record[3].saved_bytes == Y + R);
  CHECK(shape_of(on_y(std_over(1)).per_record[3]) == "[16]");
  // var's backward holds y (kept), y's gradient and y - mean at once: 3 y (a mean's backward
  // peaks at 2 y, in layer_scale's backward: y's gradient and gamma's at y's size)
  const auto var_peak = on_y(var_over(1, 1, keepdim)).fwd_bwd_peak;
  CHECK(var_peak >= 3 * Y);
  CHECK(var_peak < 3 * Y + 1024);
  CHECK(on_y(mean_over(1, 1, keepdim)).fwd_bwd_peak < 2 * Y + 2048);
  // y / (std(y) + eps): DivBackward0 keeps both operands (y and the [16, 1] denominator)
  const auto quotient = on_y(parallel(merge_kind::divide, sequential(), sequential(std_over(1, 1, keepdim), scale())));
  CHECK(quotient.saved_activations == on_y(std_over(1, 1, keepdim), scale()).saved_activations + R);
  CHECK(shape_of(quotient.per_record[3]) == "[16,256]");
  // on the input (no gradient) the denominator needs none: a is not kept, only b
  const auto on_input = [](auto... ops) { return budget(sequential(input(16, 256), ops...), on_cuda(2), dev); };
  CHECK(on_input(parallel(merge_kind::divide, layer_scale(true), std_over(1, 1, keepdim))).saved_activations ==
        on_input(layer_scale(true)).saved_activations + R);
  // torch.maximum keeps both operands; its backward adds grad / 2 and two bool masks
  const auto maxout = [](merge_kind m) {
    return budget(sequential(input(16, 256), parallel(m, linear(256), linear(256))), on_cuda(2), dev);
  };
  CHECK(maxout(merge_kind::maximum).saved_activations == maxout(merge_kind::add).saved_activations + 2 * Y);
  CHECK_THROWS_AS(budget(sequential(input(16, 256), parallel(merge_kind::maximum, sequential(), mean_over(1, 1, keepdim))), on_cuda(2), dev),
                  std::invalid_argument);
  CHECK(maxout(merge_kind::minimum).fwd_bwd_peak == maxout(merge_kind::maximum).fwd_bwd_peak);
  // a learned bias: one parameter per channel or per last-dimension value, nothing kept
  CHECK(on_input(learned_bias(true)).parameter_count == 256);
  CHECK(budget(sequential(input(8, 4, 4), learned_bias()), on_cuda(2), dev).parameter_count == 8);
  CHECK(on_y(learned_bias(true)).per_record[3].saved_bytes == 0);
}

TEST_CASE("chunk: views of equal parts, the base kept whole, strided unless only ones precede", "[layers][views]") {
  // ShuffleNet V2's stride-1 unit on y1 = conv2d(8, 1) of [8, 4, 4] at batch 2 (1,024 B):
  // cat(x1, conv(x2)) with x1, x2 = y1.chunk(2, dim=1)
  constexpr auto unit = budget(sequential(input(8, 4, 4), conv2d(8, 1),
                                          parallel(merge_kind::concat, chunk(2, 0), sequential(chunk(2, 1), conv2d(4, 1)))),
                               on_cuda(2), dev);
  REQUIRE(shape_of(unit.per_record[4]) == "[4,4,4]");
  REQUIRE(shape_of(unit.per_record[6]) == "[4,4,4]");
  REQUIRE(shape_of(unit.per_record[3]) == "[8,4,4]");
  REQUIRE(unit.per_record[4].saved_bytes == 0);
  REQUIRE(unit.per_record[6].saved_bytes == 0);
  // the conv on x2 saves its input, a view: all of y1 stays (1,024 B, not the chunk's 512)
  REQUIRE(unit.per_record[7].saved_bytes == 1024);
  // after forward: y1 (kept through the view) + the cat 1,024 + the loss 4; the chunks add nothing
  REQUIRE(unit.after_forward == 2052);
  // a channel chunk of a batch is not contiguous: layer_norm copies it (at batch 1 it is
  // contiguous, as select_token's view: the same forward peak)
  constexpr auto on = [](layer part, std::int64_t b) {
    return budget_totals(sequential(input(2, 256), part, layer_norm(), linear(1)), on_cuda(b), dev).forward_peak;
  };
  REQUIRE(on(chunk(2, 0), 1) == on(select_token(0), 1));
  REQUIRE(on(chunk(2, 0), 2) > on(select_token(0), 2));
}

// --- parallel branches ----------------------------------------------------------------------------

TEST_CASE("parallel: concat, add, stack, multiply, add in place", "[layers][parallel]") {
  // input(4) → linear(8) (y1 = 32 B at batch 1) → parallel(...) of two linears.
  // Both branch linears save y1: one storage, 32 B.
  constexpr auto cat = budget(sequential(input(4), linear(8), parallel(merge_kind::concat, linear(3), linear(5))),
                              on_cuda(1), dev);
  REQUIRE(shape_of(cat.per_record[3]) == "[8]");             // 3 + 5 along dimension 0
  REQUIRE(cat.per_record[3].parameter_count == (8 * 3 + 3) + (8 * 5 + 5));  // 72
  REQUIRE(cat.per_record[3].saved_bytes == 32);

  constexpr auto add = budget(sequential(input(4), linear(8), parallel(merge_kind::add, linear(6), linear(6))), on_cuda(1), dev);
  REQUIRE(shape_of(add.per_record[3]) == "[6]");
  REQUIRE(add.per_record[3].parameter_count == 2 * (8 * 6 + 6));  // 108
  REQUIRE(add.per_record[3].saved_bytes == 32);

  constexpr auto stack = budget(sequential(input(4), linear(8), parallel(merge_kind::stack, linear(6), linear(6))), on_cuda(1), dev);
  REQUIRE(shape_of(stack.per_record[3]) == "[2,6]");
  REQUIRE(stack.per_record[3].output_bytes == 48);
  REQUIRE(stack.per_record[3].saved_bytes == 32);

  // a * b keeps both operands (op_rules §1): y1 32 + 24 + 24 = 80 B
  constexpr auto mul = budget(sequential(input(4), linear(8), parallel(merge_kind::multiply, linear(6), linear(6))),
                              on_cuda(1), dev);
  REQUIRE(shape_of(mul.per_record[3]) == "[6]");
  REQUIRE(mul.per_record[3].saved_bytes == 80);

  // Forward peaks. add: y1 32 + branch outputs 24 + 24 + the new sum 24 = 104 B. In place:
  // no new sum: 80 B while the branches run, then y1 + out + x**2 + loss = 32+24+24+4 = 84 B.
  REQUIRE(add.forward_peak == 104);
  constexpr auto inpl = budget_totals(sequential(input(4), linear(8), parallel(merge_kind::add_inplace, linear(6), linear(6))),
                                      on_cuda(1), dev);
  REQUIRE(inpl.forward_peak == 84);

  // An identity branch (sequential()) concatenated with a linear on [3, 8] tokens: [6, 8].
  constexpr auto id = budget(sequential(input(3, 4), linear(8), parallel(merge_kind::concat, sequential(), linear(8))),
                             on_cuda(1), dev);
  REQUIRE(shape_of(id.per_record[3]) == "[6,8]");
}

// --- attention ------------------------------------------------------------------------------------

TEST_CASE("attention: parameters and output shape", "[layers][attention]") {
  // q (D·D + D), kv (D·2D + 2D), out (D·D + D) = 4·(D² + D); D = 8: 288.
  constexpr auto a = budget(sequential(input(16, 8), attention(8, heads(2))), on_cuda(1), dev);
  REQUIRE(a.per_record[2].parameter_count == 288);
  REQUIRE(shape_of(a.per_record[2]) == "[16,8]");
  // Grouped-query, 1 kv head of 4: kv projects to 2·4 = 8: 2·(64 + 8) + (8·8 + 8) = 216.
  constexpr auto g = budget(sequential(input(16, 8), attention(8, heads(2), kv_heads(1))), on_cuda(1), dev);
  REQUIRE(g.per_record[2].parameter_count == 216);
  // qkv_bias(false): q, k, v without a bias, the output with one (timm's qkv_bias=False,
  // vit-pytorch's to_qkv): 4·D² + D = 264; qkv_bias(true) with no_bias (Qwen2): 4·D² + 3·D = 280
  REQUIRE(budget(sequential(input(16, 8), attention(8, heads(2), qkv_bias(false))), on_cuda(1), dev).per_record[2].parameter_count == 264);
  REQUIRE(budget(sequential(input(16, 8), attention(8, heads(2), no_bias, qkv_bias(true))), on_cuda(1), dev).per_record[2].parameter_count == 280);
  REQUIRE(budget(sequential(input(16, 8), attention(8, heads(2), attention_impl::flash, fused_qkv, qkv_bias(false))), on_cuda(1), dev)
              .per_record[2].parameter_count == 264);
  REQUIRE(score_matrix_bytes(1, 2, 16, 16, dtype::fp32) == 2048);  // B·H·Lq·Lk·4
  // (The score matrix in the forward peak and flash's logsumexp: test_peak_walk.cpp.)
}

// --- unfold, patch embedding ----------------------------------------------------------------------

TEST_CASE("unfold: C·k² rows by L positions", "[layers][unfold]") {
  // conv2d(2, 1) makes y1 = 2·36·4 = 288 B; F.unfold(3, padding=1) on [2, 6, 6]: L = 6·6 = 36,
  // output [2·9, 36] = B·C·k²·L·4 = 1·2·9·36·4 = 2,592 B; keeps nothing in PyTorch 2.x (im2col's
  // derivative reads sizes only, op_rules.md 2.6 #4), its input y1 in 1.13 (op_rules §1).
  constexpr auto u = budget(sequential(input(2, 6, 6), conv2d(2, 1), unfold(3, padding(1))), on_cuda(1), dev);
  REQUIRE(shape_of(u.per_record[3]) == "[18,36]");
  REQUIRE(u.per_record[3].output_bytes == 2592);
  REQUIRE(unfold_bytes(1, 2, 3, 36, dtype::fp32) == 2592);
  REQUIRE(u.per_record[3].saved_bytes == 0);
  const auto u113 = budget(sequential(input(2, 6, 6), conv2d(2, 1), unfold(3, padding(1))), cpu_reference_step(1, optimizer_kind::adamw), dev);
  REQUIRE(u113.per_record[3].saved_bytes == 288);
  // stride 2: (6 + 2 − 3)/2 + 1 = 3 per side, L = 9
  constexpr auto u2 = budget(sequential(input(2, 6, 6), conv2d(2, 1), unfold(3, padding(1), stride(2))), on_cuda(1), dev);
  REQUIRE(shape_of(u2.per_record[3]) == "[18,9]");
}

TEST_CASE("patch embedding: 785 tokens at 448/16", "[layers][vision]") {
  // (448/16)² = 28² = 784 patches + class token = 785 tokens of 768.
  REQUIRE(patch_tokens(448, 448, 16, true) == 785);
  constexpr auto p = budget(sequential(input(3, 448, 448), patch_embedding(768, 16)), on_cuda(1), dev);
  REQUIRE(shape_of(p.per_record[2]) == "[785,768]");
  // conv 3·768·16² + 768 = 589,824 + 768; class token 768; positions 785·768 = 602,880
  REQUIRE(p.per_record[2].parameter_count == 589824 + 768 + 768 + 602880);
  constexpr auto n = budget(sequential(input(3, 448, 448), patch_embedding(768, 16, false)), on_cuda(1), dev);
  REQUIRE(shape_of(n.per_record[2]) == "[784,768]");
  REQUIRE(n.per_record[2].parameter_count == 589824 + 768 + 784 * 768);
  // torchvision's split: the class token with conv_proj, the positions in the encoder
  constexpr auto split = budget(sequential(input(3, 448, 448), patch_embedding(768, 16, true, false), pos_embedding()), on_cuda(1), dev);
  REQUIRE(split.per_record[2].parameter_count == 589824 + 768 + 768);
  REQUIRE(split.per_record[3].parameter_count == 785 * 768);
  REQUIRE(split.parameter_count == p.parameter_count);
}

TEST_CASE("layer_norm copies a transposed input: nn.MultiheadAttention's batch_first output (CT10)", "[layers][attention]") {
  // The residual after nn.MultiheadAttention(batch_first=True) is a transposed view; the
  // layer_norm after it takes input.expect_contiguous(), a copy alive beside its output. The
  // forward peaks at that moment: the end of the forward (everything saved, the LN's output
  // saved by the Linear) plus the copy, less the few KB that come after it (the [8, 1] output,
  // the loss and what it keeps)
  const auto net = sequential(input(64, 128), residual(layer_norm(), attention(128, heads(4), attention_impl::torch_mha)), layer_norm(), linear(1));
  const auto b = budget_totals(net, training{.batch = 8}, devices::h100_80gb);
  constexpr std::int64_t copy = 8 * 64 * 128 * 4;
  CHECK(b.forward_peak - b.after_forward <= copy);
  CHECK(b.forward_peak - b.after_forward > copy - 4096);
  // a layer_norm on a contiguous input (the model's input) copies nothing: its forward peaks
  // within one statistics tensor (8·64 rows of fp32, 2,048 B) of the end, not a copy above it
  const auto plain = sequential(input(64, 128), layer_norm(), linear(1));
  const auto p = budget_totals(plain, training{.batch = 8}, devices::h100_80gb);
  CHECK(p.forward_peak - p.after_forward == 8 * 64 * 4);
}

TEST_CASE("nn.MultiheadAttention with need_weights=True (torch_mha_weights): the materialized path", "[layers][attention]") {
  // [16, 64], 4 heads, batch 2 (X = 2·16·64·4 = 8,192 B), PyTorch 2.x: the in_proj input copy
  // (X), the packed q, k, v copy (3·X), q·√(1/d) (X, kept by bmm), the probabilities
  // (2·4·16·16·4 = 8,192, kept by softmax and bmm), the output's contiguous copy (X, kept by
  // out_proj): 57,344 B, as the 2.6 CPU trace of the module saves them (op_rules.md 2.6 #44).
  // need_weights=False (SDPA's efficient kernel on CUDA in fp32) keeps no probabilities: the two
  // copies, the SDPA output, its contiguous copy and the log-sum-exp padded to 32 rows (1,024 B):
  // 50,176 B.
  constexpr auto with_weights = budget(sequential(input(16, 64), attention(64, heads(4), attention_impl::torch_mha_weights)), on_cuda(2), dev);
  constexpr auto without = budget(sequential(input(16, 64), attention(64, heads(4), attention_impl::torch_mha)), on_cuda(2), dev);
  CHECK(with_weights.per_record[2].saved_bytes == 57344);
  CHECK(without.per_record[2].saved_bytes == 50176);
  CHECK(with_weights.parameter_count == without.parameter_count);
  // the head-averaged weights [B, 16, 16] fp32 come and go at the end of the forward
  CHECK(with_weights.forward_peak >= with_weights.after_forward + 2 * 16 * 16 * 4);
}

// --- graph layers ---------------------------------------------------------------------------------

TEST_CASE("GCN and GAT: shapes, parameters, edge lists, saved set", "[layers][graph]") {
  // 100 nodes × 16 features, 500 edges, batch 1 (one graph).
  constexpr auto g = budget(sequential(input(100, 16), gcn(32, 500)), on_cuda(1), dev);
  REQUIRE(shape_of(g.per_record[2]) == "[100,32]");
  REQUIRE(g.per_record[2].parameter_count == 16 * 32 + 32);  // W (no bias in the matmul) + bias: 544
  // data: features 100·16·4 = 6,400 + int64 src and dst edge lists 2·500·8 = 8,000
  REQUIRE(g.input_batch == 14400);
  // saved: x for W's gradient 6,400; z[src] keeps the src index 4,000; · norm keeps the [E, 1]
  // fp32 norm 500·4 = 2,000; index_add_ keeps its source [E, 32] 500·32·4 = 64,000 and the dst
  // index 4,000 (op_rules §0.6) → 80,400 B
  REQUIRE(g.per_record[2].saved_bytes == 80400);

  // Two GCN layers over the same edges share one pair of edge lists.
  constexpr auto g2 = budget_totals(sequential(input(100, 16), gcn(32, 500), gcn(32, 500)), on_cuda(1), dev);
  REQUIRE(g2.input_batch == 14400);
  REQUIRE(g2.parameter_count == 544 + (32 * 32 + 32));

  // GAT, 4 heads × 8: W 16·32 = 512, a_src and a_dst 32 each → 576; out [100, 32].
  constexpr auto a = budget(sequential(input(100, 16), gat(heads(4), 8, 500)), on_cuda(1), dev);
  REQUIRE(shape_of(a.per_record[2]) == "[100,32]");
  REQUIRE(a.per_record[2].parameter_count == 576);
}

// --- invalid models ------------------------------------------------------------------------------
// In constant evaluation these stop compilation (tests/fail); at run time they throw.

TEST_CASE("invalid layer arguments throw at run time", "[layers][errors]") {
  const training t = on_cuda(1);
  // 8 channels are not divisible into 3 groups
  CHECK_THROWS_AS(budget(sequential(input(8, 4, 4), group_norm(3)), t, dev), std::invalid_argument);
  CHECK_THROWS_AS(budget(sequential(input(6, 4, 4), conv2d(8, 3, groups(4))), t, dev), std::invalid_argument);
  // 3 heads do not divide width 8
  CHECK_THROWS_AS(budget(sequential(input(4, 8), attention(8, heads(3))), t, dev), std::invalid_argument);
  // a 5×5 kernel on a 4×4 map
  CHECK_THROWS_AS(budget(sequential(input(1, 4, 4), conv2d(1, 5)), t, dev), std::invalid_argument);
  // reshape to a different element count
  CHECK_THROWS_AS(budget(sequential(input(16), reshape(3, 5)), t, dev), std::invalid_argument);
  // a repeated block must keep its shape
  CHECK_THROWS_AS(budget(sequential(input(8), repeat<2>(linear(4))), t, dev), std::invalid_argument);
  // 3 chunks of 8 channels are not equal parts; a chunk index past the count
  CHECK_THROWS_AS(budget(sequential(input(8, 4, 4), chunk(3, 0)), t, dev), std::invalid_argument);
  CHECK_THROWS_AS(budget(sequential(input(8, 4, 4), chunk(2, 2)), t, dev), std::invalid_argument);
}

TEST_CASE("instance norm: input plus per-(sample, channel) statistics, the repeated weight with affine", "[layers][norm]") {
  // Measured, PyTorch 1.13 CPU, x[2, 4, 8, 8]: 2112 B saved (input 2048 + mean and invstd of
  // 2·4 fp32 each), 2144 B with affine (+ the weight repeated over the batch, 2·4 fp32).
  constexpr auto plain = budget(sequential(input(4, 8, 8), conv2d(4, 1), instance_norm()), on_cuda(2), dev);
  REQUIRE(plain.per_record[3].saved_bytes == 2048 + 2 * 32);
  REQUIRE(plain.per_record[3].parameter_count == 0);
  constexpr auto affine = budget(sequential(input(4, 8, 8), conv2d(4, 1), instance_norm(true)), on_cuda(2), dev);
  REQUIRE(affine.per_record[3].saved_bytes == 2048 + 3 * 32);
  REQUIRE(affine.per_record[3].parameter_count == 8);
  REQUIRE(affine.per_record[3].trainable_count == 8);
  // autocast runs it in fp32: an fp16 input (the conv's output) is cast, and the fp32 copy is kept
  constexpr auto amp = budget(sequential(input(4, 8, 8), conv2d(4, 1), instance_norm()),
                              training{.batch = 2, .precision = amp_fp16, .optimizer = sgd}, dev);
  REQUIRE(amp.per_record[3].saved_bytes == 2048 + 2 * 32);
}

TEST_CASE("softmax over another dimension; a convolution copies a cat's or a stack's slice of its gradient", "[layers][views]") {
  // SKNet's nn.Softmax(dim=1) over its branches on [N, M, C, 1, 1]: softmax(0) keeps its output
  constexpr auto over = [](layer sm) { return budget(sequential(input(2, 64, 4, 4), layer_scale(), sm), on_cuda(2), dev); };
  CHECK(over(softmax(0)).saved_activations == over(softmax()).saved_activations);
  CHECK(shape_of(over(softmax(1)).per_record[3]) == "[2,64,4,4]");
  CHECK_THROWS_AS(over(softmax(4)), std::invalid_argument);
  // three convolutions of [8, 16, 16] stacked (Y = 2·8·16·16·4 = 16 KiB each): each one's backward
  // copies its strided slice of the stacked gradient; the sum of the same branches passes one
  // contiguous gradient to all three
  constexpr std::int64_t Y = 2 * 8 * 16 * 16 * 4;
  const auto branches = [](merge_kind m, auto... tail) {
    return sequential(input(8, 16, 16), parallel(m, conv2d(8, 1), conv2d(8, 3, padding(1)), conv2d(8, 5, padding(2))), tail...);
  };
  const auto stacked = budget(branches(merge_kind::stack, mean_over(0)), on_cuda(2), dev);
  const auto at_one = budget(branches(merge_kind::stack, mean_over(0)), on_cuda(1), dev);
  const auto summed = budget(branches(merge_kind::add, scale()), on_cuda(2), dev);
  // the stacked gradient (3 Y) instead of one shared Y, and the copy Y: 3 Y more
  CHECK(stacked.fwd_bwd_peak - summed.fwd_bwd_peak == 3 * Y);
  // at batch 1 a slice along dimension 1 is contiguous: no copy (the stacked gradient alone, 2 Y / 2)
  CHECK(2 * at_one.fwd_bwd_peak - summed.fwd_bwd_peak < 3 * Y);
}

TEST_CASE("a spatial transformer: affine_grid keeps nothing, grid_sample keeps the image and the grid", "[layers][vision]") {
  // the tutorial's STN head on [1, 28, 28] at batch 2: theta = Linear(784, 6) of the flattened
  // image, [2, 3]; the grid [28, 28, 2] (2·28·28·2·4 = 12,544 B), the image x 6,272 B
  const auto stn = [](auto... tail) {
    return budget(sequential(input(1, 28, 28),
                             parallel(merge_kind::grid_sample, sequential(), sequential(flatten(), linear(6), reshape(2, 3), affine_grid(28, 28))), tail...),
                  on_cuda(2), dev);
  };
  const auto b = stn();
  CHECK(shape_of(b.per_record[2]) == "[1,28,28]");
  CHECK(shape_of(b.per_record[8]) == "[28,28,2]");
  CHECK(b.per_record[8].saved_bytes == 0);
  // the linear keeps the image (6,272 B, the input batch), grid_sample the grid (12,544 B) and the image
  CHECK(b.saved_activations == 6272 + 12544);
  CHECK_THROWS_AS(budget(sequential(input(1, 28, 28), parallel(merge_kind::grid_sample, sequential(), sequential())), on_cuda(2), dev),
                  std::invalid_argument);
}
