#!/usr/bin/env bash
# benchmarks/gpu/run_open_questions.sh CALL — the device calls of the 2026-11-26 session, for what the
# committed H100 files leave open (EXTRA_CASES in measure_real_libraries.py). One call per run:
#   1 (~4 min): allocator traces (--trace) of the real-library cases whose reserved peak the
#     estimate missed (ResNet-18 b64, EfficientNet-B0 b32, T5-small b16) and of single capped trials
#     one batch above the measured largest batch (ViT-B/16 115, T5-small 23); new cases the H100
#     files lack (ResNet-50 b64 fp32, DenseNet-121 b32 fp16, reentrant checkpointing); on the CPU,
#     in parallel, transformers' own models exported with torch.export (dump_transformers_graphs.py);
#   2 (~2 min): PEFT DoRA, two largest-batch searches (ResNet-50, EfficientNet-B0 fp32, 16 GiB), the
#     decoder models' torch.export graphs (use_cache=False);
#   3 (~1 min): ResNet-18 fp32 at batch 4, 8, 16, 32 and ResNet-50 fp32 at 32, traced: the batch at
#     which cuDNN's weight gradient starts staging layout copies (op_rules.md CV4).
#   4 (~3 min, prepared in the second session without a GPU): ViT-B/16 fp32 at b16, 32, 64 and the
#     capped b116 trial, traced (conv_proj's cuDNN workspace against the batch, op_rules.md CT10);
#     reentrant checkpointing again (its `trainable_without_grad`: did the decoder layers get
#     gradients?) and TinyLlama LoRA without DoRA beside the DoRA case (L8, L9); PEFT's
#     modules_to_save (bf16 copies of embed_tokens and lm_head) and LoRA on a classifier (third session).
#   5 (~2 min, prepared in the third session without a GPU): allocation traces of the 77-case file's
#     cases still outside tolerance (measure_cuda.py --trace): ResNet-18 b2 96² in bf16 and fp16
#     (after forward -3.00 %, peak -8.53 %), its fused-AdamW twin (reserved +6.77 %), BERT bf16
#     (reserved +5.08 %), GPT-2 fused AdamW (reserved -5.08 %) and the temporal CNN (+3.04 %).
#   6 (~6 min, prepared in the fourth session without a GPU): the capped ResNet-50 b182 trial, traced
#     (the estimate's one never-above miss); ResNet-18 and ConvNeXt-T at b32 bf16, traced: are
#     3-channel stems padded to 8 in 16 bits (op_rules.md CV5)? TinyLlama with bf16 weights trained
#     directly (--no-master-weights), checkpointed with and without use_reentrant (op_rules.md L10);
#     QLoRA (NF4 + double quantization, all-linear r=16) with and without PEFT's
#     prepare_model_for_kbit_training, if the image has bitsandbytes (L11, L12).
#   7 (~5 min, prepared on 2026-11-27 after 4-6 ran): traced, ResNet-18 fp32 at b2 and b3 224² (where
#     cuDNN's backward-data starts staging layout copies), ResNet-18 bf16 at b16 and b64 and ResNet-50
#     bf16 at b32 (CV6 c: the split-K partials of aligned 16-bit convs against K), ConvNeXt-T bf16 at
#     b16 and b64 (its depthwise weight gradients' 256 fp32 partials); TinyLlama with bf16 weights,
#     checkpointed (reserved -3.6 %); T5-small b16 under expandable_segments (reserved +7.3 %); and
#     measure_cuda.py's temporal_ckpt_frames_b2_t5 (CV2's cap, +4.8 %).
#   8 (~3 min, 2026-11-27 after 7): traced, VGG16 b16 AMP fp16 (does the 224² 64->64 weight gradient split K? the
#     16-bit partials' envelope took its reserved peak -0.37 % -> -5.38 %), and configurations the envelope was not
#     derived on (ResNet-34 b64 bf16, ResNet-18 b128 fp16, VGG16 b4 bf16); the checkpointed temporal CNN again with
#     Python frames only (GB_TRACE_STACKS=python: with stacks="all" its backward raised SystemError in call 7).
#   9 (~4 min, 2026-11-27 after 8, with CV6 c's envelope committed first): 16-bit configurations the
#     envelope was not set on (ResNet-50 b64 fp16, WideResNet-50-2 b16, ResNet-152 b32, ResNet-18 b256,
#     VGG11-BN b32, bf16 but the first), traced, and the largest ResNet-34 AMP bf16 batch under 16 GiB.
#   10 (~2 min, after 9): the checkpointed temporal CNN traced with no frames (GB_TRACE_FRAMES=none: nothing
#     is read inside the allocator's callback; sizes and order are what CV2's cap needs), and the capped ResNet-34 bf16 b902 trial, traced
#     (902 OOMed in call 9's search; the estimate passes it).
#   11 (~4 min, prepared 2026-11-27 after 10 ran; ran 2026-11-27 evening, 98 s): measure_cuda.py's resnet50_b16_224_fp16_foreach traced
#     (an fp16 ResNet stem at a small batch: padded to 4 or 8? op_rules.md CV6; its reserved +4.39 % under CV6 c's
#     envelope), ResNet-18 fp32 b2 at 128² and 160², traced (where backward-data starts staging X + Y + W: none at
#     96², all at 224²; resnet18_b2_96_adamw_fused's reserved +6.77 %), and the capped ResNet-34 bf16 trial at 901,
#     traced beside call 10's b902 (the same process's segments one batch apart: the one-above miss); and,
#     traced, DenseNet-121 fp32 b32 and ResNet-50 fp32 b8 at 448² (does a stride-1 1x1 conv stage X + Y by its
#     channels, min(C_in, C_out) >= 512, or by its 7² map? op_rules.md CV4, observed since; ~5 min in all).
#   12 (~5 min, prepared 2026-11-27 evening after 11; ran the same evening, 105 s): traced, ResNet-18 fp32 b8 at 448², ResNet-50 fp32 b64
#     (the h200 file's case, now traced), ResNet-18 AMP fp16 b2 and b8 at 224² (op_rules.md CV4 d, e; CV6 d);
#     then the largest DenseNet-121 fp32 and WideResNet-50-2 AMP bf16 batches under 16 GiB (never fitted on).
#   13 (~2 min, 2026-11-27 evening after 12; ran, 53 s): DenseNet-121 fp32's capped trials at b120 (ran) and b121 (OOM),
#     traced: what the process asked near the cap where the estimate passes b121.
#   14 (~1 min, 2026-11-27 evening after 13): ResNet-50 fp32's capped trial at b181 (ran in call 2's search), traced.
#   15 (~5 min, 2026-11-27 night, a new session lent the H200): the three one-above trials (DenseNet-121 fp32 b121,
#     ResNet-50 fp32 b182, ResNet-34 bf16 b902) each in a fresh process with no batch-1 step first, traced (op_rules.md
#     A17: is the miss the measurement's warm-up or the budget's?); then seven largest batches under 16 GiB never
#     searched (ResNet-152, ResNet-50, ConvNeXt-T, MobileNetV3-L and ViT-B/16 in AMP bf16, VGG16 and ResNet-18 at
#     160² in AMP fp16), the estimates written down before the run (cuda-h200/README.md).
#   16 (~2 min, after 15): VGG16 AMP fp16's capped trials at 304 (ran) and 305 (OOM; the estimate's largest is 313)
#     and an uncapped b128 step, traced: where the budget's requests part from the process's at large batches.
#   17 (~4 min, 2026-11-28 after 16): nine largest batches that ran, each trial 12 steps (not 3), traced where the
#     allocator model disagrees (ResNet-34 bf16 b901: its capped replay OOMs in step 6): does a later step OOM?
#   18 (~5 min, 2026-11-28, a session lent the H200): the 12-step trials the allocator model answers wrong, traced
#     (ResNet-50 fp32 b181: passed, OOMed; ResNet-50 bf16 b352: refused, trained); conv_sweep.py, one convolution's
#     requests against the batch for every ResNet-50 (fp32, bf16) and VGG16 (fp16) shape (CV4's forward "+6-16 MiB",
#     the 1x1 weight-gradient rule); ResNet-50 fp32's largest batch under 16 GiB with 12-step trials.
#   19 (~6 min, after 18, the same session): every largest-batch case of the H100 and H200 files again with 12-step
#     trials, each walking down from one above its 3-step answer (the CLI's default budgets a long job, A19).
#   20 (~2 min, after 19, the same session): conv_sweep.py --dense, ResNet-50's seven 3×3 convolutions at every batch
#     from 1 to 256 in fp32 and bf16: is the forward's extra workspace (CV4's "+6-16 MiB") periodic in the batch?
#   21 (~4 min, prepared 2026-11-28 in a session without a GPU): modules as users write them, exported and
#     budgeted from their graphs (`graph` specs): a U-Net with nn.Upsample / F.interpolate at 256² and an
#     nn.TransformerEncoder (d 512, 8 heads, 6 layers, dropout 0.1, 256 tokens), fp32 and AMP bf16, traced
#     (op_rules.md U1; MHA with dropout through SDPA's fused kernels), and each one's largest batch under 16 GiB.
#     Commit: copy tests/export/data/{upsample_unet_256,encoder_stack_w512}.json into the reference's graphs/.
#   22 (~4 min, prepared 2026-11-28 in a session without a GPU): nanoGPT's GPT-2 124M as its train.py trains it
#     (exported through torch.export with --targets: its own cross-entropy, the logits dropped; block 1024,
#     bias=False), AMP bf16 b12 and fp32 b4, and Swin-T at 224² (window attention mapped whole; layers/swin.hpp's
#     CUDA side read from torchvision's code, not traced), fp32 and AMP bf16 b32, traced; their largest batches
#     under 16 GiB. Commit: copy tests/export/data/{nanogpt_124m,swin_t_224}.json into the reference's graphs/.
#   23 (~2 min, prepared 2026-12-06 in a session without a GPU): transformers' GPT2LMHeadModel (gpt2.json,
#     activation_function gelu_new: NewGELUActivation, the tanh formula written out) against the same model
#     with "gelu" (F.gelu), AMP bf16 b8 seq 512, traced: does the MLP keep x's fp32 copy, tanh, 1 + tanh and
#     0.5·x as op_rules.md 2.6 #65 budgets (--hf-config: 3.35 GiB saved vs the gelu model's 1.66 GiB)?
#   24 (~4 min, prepared 2026-12-06 in a session without a GPU): call 21's nn.TransformerEncoder (d 512, 8 heads,
#     6 layers, dropout 0.1, 256 tokens, b32) called with the causal mask and a key padding mask (op_rules.md 2.6 #76:
#     on CUDA an attn_mask rules out flash, cuDNN and efficient keep the merged [B·H, L, L] mask, its 16-bit copy under
#     autocast: read from sdp_utils.cpp, not measured), fp32 and AMP bf16, traced, beside call 21's unmasked twin, and
#     its largest AMP bf16 batch under 16 GiB; and nn.TransformerDecoder (the same size, over a 256-token memory,
#     AMP bf16: nn.MultiheadAttention across two tensors, op_rules.md 2.6 #78), traced.
#     Commit: copy tests/export/data/{masked_encoder_w512,decoder_stack_w512}.json into graphs/.
#   25 (~4 min, prepared 2026-12-06 in a session without a GPU): sequence-first models (op_rules.md 2.6 #79):
#     the nn.Transformer tutorial's language model at d 512 ([L, B] ids, batch_first=False), AMP bf16 b32, and OpenAI
#     CLIP ViT-B/32's text tower (x.permute(1, 0, 2) around sequence-first blocks), AMP fp16 b128, traced, and its
#     largest AMP fp16 batch under 16 GiB. Commit: copy tests/export/data/{tutorial_lm_w512,clip_text_b32}.json into graphs/.
#   26 (~3 min, prepared 2026-12-06 in a session without a GPU): nn.LSTM / nn.GRU under cuDNN, which the library
#     cannot describe yet (no recurrent op; measure_real_libraries.py's `module` kind): bare batch-first LSTMs at
#     sizes that separate T, B, H, layers and directions, fp32, AMP bf16 and fp16, a GRU, and pytorch/examples'
#     word_language_model RNNModel (LSTM and GRU, its README's medium size), traced: what cuDNN's reserve and
#     workspace are against T, B, H (the traces name _cudnn_rnn's allocations). Commit the JSON and the traces.
#   27 (~4 min, prepared 2026-12-06 in a session without a GPU): the rules that session derived on 2.6 CPU, on
#     transformers' own models, traced: Qwen3-0.6B AMP bf16 b4 t1024, full and LoRA all-linear on a bf16 base (q_norm,
#     k_norm: op_rules.md L16); Phi-3-mini with Phi-4-mini's partial_rotary_factor 0.75, LoRA, checkpointed (L17: does
#     the torch.cat-made q make the attention output a copy under cuDNN too?); Phi-3-mini at 4096 tokens (window 2047)
#     and Mistral-7B at 4096 (window 4096), LoRA on bf16 bases (L18: the float mask each layer's kernel keeps).
#   28 (~3 min, prepared 2026-12-06 in a second session without a GPU): Gemma-3-1B under LoRA all-linear on a bf16
#     base, b2 t1024 AMP bf16, whole and each layer checkpointed (op_rules.md L19-L20: the window's mask on the
#     sliding layers, the local RoPE, per-layer checkpoints), OLMo-2-0425-1B full (AMP bf16, b4 t1024) and LoRA
#     all-linear on a bf16 base (L22), traced. Estimates written before any run (H100 80GB, commit of that stop):
#     live peak 14,178,718,720 / 8,858,461,696 / 36,476,379,648 / 17,320,780,288 B; reserved 15,510,536,192 /
#     10,139,729,920 / 39,472,594,944 / 18,549,309,440 B.
#   29 (~4 min, prepared 2026-12-07 in a session without a GPU): an OLMo-3-7B-sized model under LoRA all-linear r=16 on a
#     bf16 base, b1 t8192 AMP bf16, each layer checkpointed (op_rules.md L23: the 4096-token window's mask on 24 of 32
#     layers, one RoPE table), and a Granite-3.1-2B-sized model (L24: the multipliers' tensors, the logits divided) full
#     (AMP bf16, b4 t1024) and under LoRA all-linear on a bf16 base, traced (configs: hf-configs/olmo-3-7b-like.json,
#     granite-3.1-2b-like.json). Estimates written before any run (H100 80GB, commit of that stop): live peak
#     27,356,938,752 / 59,199,934,976 / 27,131,032,064 B; reserved 30,964,449,280 / 62,262,345,728 / 28,313,649,152 B.
#   30 (~3 min, prepared 2026-12-07 in a second session without a GPU): a Gemma-2-2B-sized model (op_rules.md L25: a
#     4096-token window on every other layer, one RoPE table, the logits soft-capped at 30; the attention transformers
#     5.17 gives it when the config names none is recorded as attn_implementation — "sdpa" expected) full (AMP bf16, b2
#     t1024) and under LoRA all-linear r=16 on a bf16 base at b1 t8192 (the window's mask on 13 of 26 layers), each
#     layer checkpointed, and under the same LoRA at b1 t2048 with attn_implementation "eager" (L26: every layer's
#     soft-capped scores kept, as the model's training warning recommends), traced (configs: hf-configs/gemma-2-2b-like.json,
#     gemma-2-2b-eager-like.json). Estimates written before any run (H100 80GB, commit of that stop): live peak
#     54,025,968,128 / 36,039,223,808 / 27,970,864,640 B; reserved 63,673,729,024 / 45,573,210,112 / 30,681,333,760 B.
#     If attn_implementation comes back "eager" for the first two, L25's premise is wrong: their estimates are then low
#     by the soft-capped score matrices. Re-estimated at the third stop of 2026-12-07 (op_rules.md L27-L29: RoPE tables
#     [1, T, d], DynamicCache copies, the soft-cap's three records): live 54,040,123,904 / 36,039,223,808 /
#     27,968,767,488 B; reserved 62,044,241,920 / 41,378,906,112 / 29,850,861,568 B.
#   31 (~3 min, prepared 2026-12-07 in a third session without a GPU): transformers 5's MixtralExperts (op_rules.md L28:
#     3-D parameters through grouped_mm_experts_forward; on CUDA F.grouped_mm(input.to(weight.dtype), ...), so the
#     experts run in the weights' type whatever autocast says) on a small Mixtral (hf-configs/mixtral-small-like.json:
#     mixtral-8x7b's config at width 1024, 8 layers, 8 experts top-2, 791,233,536 parameters), AMP bf16 b4 t1024 with
#     fp32 weights (fp32 expert activations) and with bf16 weights (base bf16), traced. Estimates written before any
#     run (H100 80GB, this stop): live 16,563,376,640 / 9,280,649,728 B; reserved 19,019,071,488 / 10,896,801,792 B.
#     If F.grouped_mm refuses fp32 on CUDA the first case fails and its log says so: the fallback loop then runs it.
#   32 (~3 min, prepared 2026-12-07 in a fourth session without a GPU): generate() past a sliding window (op_rules.md
#     L31: transformers 5's DynamicSlidingWindowLayer holds the prompt's whole copy from the prefill to its first decode
#     step; [B, T, d] RoPE tables and per-sample window masks from generate()'s attention_mask), bf16, traced: Mistral-7B
#     2 x (6144 + 64), Gemma-2-2B-sized 4 x (6144 + 64), Gemma-3-1B 4 x (4096 + 64), OLMo-3-7B-sized 1 x (6144 + 64).
#     Estimates written before any run (H100 80GB, this stop; max_memory_allocated / device): Mistral 17,669,136,384 /
#     18,473,197,568 B; Gemma 2 9,867,780,608 / 10,671,841,792 B; Gemma 3 3,400,800,512 / 4,204,861,696 B; OLMo 3
#     18,448,539,648 / 19,252,600,832 B. Since 2026-12-08 (a seventh session, op_rules.md A22: generate() through the
#     caching allocator model, the inference context 706.81 MiB; estimates written before any run, max_memory_reserved /
#     device): Mistral 18,142,461,952 / 18,883,608,576 B; Gemma 2 10,720,641,024 / 11,461,787,648 B; Gemma 3
#     3,808,428,032 / 4,549,574,656 B; OLMo 3 19,597,885,440 / 20,339,032,064 B.
#   33 (~4 min, prepared 2026-12-07 in a fifth session without a GPU, extended 2026-12-08): padded batches (op_rules.md L32: with zeros in
#     the attention_mask every layer's SDPA gets a mask, grouped-query k and v are repeated to every head, and on CUDA
#     the efficient kernel keeps the mask; generate() on left-padded prompts repeats a layer's K and V at each decode
#     step), TinyLlama (32 heads, 4 kv heads), traced: training AMP bf16 b4 t1024 padded (the committed unpadded twin:
#     26,694,976,000 B), generate() 16 x (512 + 128) padded, and decode-bound 16 x (64 + 1984) unpadded and padded.
#     Estimates written before any run (H100 80GB, this stop; max_memory_allocated / device): training 27,525,446,144 /
#     29,813,964,800 B (reserved 29,009,903,616); generate 2,835,599,360 / 3,639,660,544 B; decode-bound 2,991,329,280 /
#     3,795,390,464 B and padded 3,242,864,640 / 4,046,925,824 B. Added 2026-12-08 (op_rules.md L33): transformers 5's
#     BERT classifier AMP fp16 b16 t512 on a padded batch (the committed unpadded twin: 4,921,533,952 B); estimate
#     5,042,890,752 / 6,147,604,480 B (reserved 5,343,543,296). Also (op_rules.md L34) transformers 5's GPT-2 AMP bf16
#     b8 t512, unpadded and padded: 7,712,077,824 / 8,882,290,688 B (reserved 8,078,229,504) and 7,767,665,664 /
#     8,907,456,512 B (reserved 8,103,395,328). Since 2026-12-08 (op_rules.md A22; max_memory_reserved / device, written
#     before any run): generate 16 x (512 + 128) padded 2,961,178,624 / 3,702,325,248 B; decode-bound 16 x (64 + 1984)
#     3,829,399,552 / 4,570,546,176 B (the decode's grown K and V leave their old blocks: a 799 MiB reserve over a
#     704 MiB cache, the first measurement of A22's decode steps) and padded 11,007,950,848 / 11,749,097,472 B (repeat_kv's
#     K and V grow by 64 KiB a step past 10 MiB: each 2 MiB size class leaves two cached segments behind).
#   34 (~3 min, prepared 2026-12-08 in a sixth session without a GPU): T5 as transformers 5.17 runs it, through SDPA
#     (op_rules.md L37, read off call 1's trace of t5-small b16 x 512 AMP bf16 only), on configurations it was not read
#     off, traced: t5-small fp32 b8 x 512 (no autocast: the math path in fp32, cross-attention on the efficient
#     kernel), t5-base AMP bf16 b8 x 512 (12 heads, 12 + 12 layers), t5-small AMP bf16 b32 x 256, and t5-small with
#     attn_implementation "eager" b16 x 512 (the eager rules' first CUDA run). Estimates written before any run (H100
#     80GB, this stop; max_memory_allocated / reserved / device): fp32 6,586,374,656 / 7,365,197,824 / 8,169,259,008 B;
#     t5-base 15,620,476,928 / 16,114,515,968 / 16,918,577,152 B; b32 x 256 9,054,270,464 / 10,550,771,712 /
#     11,354,832,896 B; eager 11,168,979,968 / 12,578,717,696 / 13,382,778,880 B; checkpointed (gradient_checkpointing_enable
#     sets the cross-attention's zeros to require grad: does cuDNN still take them?) 4,980,776,960 / 6,786,383,872 /
#     7,590,445,056 B. And t5-small b16 x 512 on a padded
#     batch, which the estimator refuses through SDPA (named error; its trace settles the rule). The configs t5-base.json and
#     t5-small-eager.json go with the results into the reference file's hf-configs/.
# Everything lands in $OUT as open-questions<CALL>.tgz. GB_CALL5_LIMIT (seconds, default 240) shortens
# call 5 when it follows another call in the same device command.
#     run(command="bash benchmarks/gpu/run_open_questions.sh 1", timeout_s=480)
set -uo pipefail
call="${1:-}"
case "$call" in 1|2|3|4|5|6|7|8|9|10|11|12|13|14|15|16|17|18|19|20|21|22|23|24|25|26|27|28|29|30|31|32|33|34) ;; *) echo "usage: run_open_questions.sh 1-34 (the device call to run)" >&2; exit 2 ;; esac
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo"
out="${OUT:-$repo/benchmarks/accuracy/out}"
work="$(mktemp -d /tmp/gb_open.XXXXXX)"
export PYTHONUNBUFFERED=1
m=benchmarks/gpu/measure_real_libraries.py
# dump_graphs SECONDS [--models LIST]: the torch.export graphs, on the CPU, in the background
dump_graphs() {
  local limit=$1; shift
  (CUDA_VISIBLE_DEVICES= timeout -k 5 "$limit" python3 benchmarks/gpu/dump_transformers_graphs.py --out "$work/graphs" "$@" \
    >"$work/graphs.log" 2>&1) &
  dump=$!
}
# measure NAME SECONDS BUDGET CASE_TIMEOUT CASES [--trace]: real-library cases into $work/NAME.json
measure() {
  local name=$1 limit=$2 budget=$3 per=$4 cases=$5; shift 5
  timeout -k 5 "$limit" python3 $m --extra --out "$work/$name.json" --budget "$budget" --case-timeout "$per" --cases "$cases" "$@" 2>&1 \
    | tee "$work/$name.log"
}
dump=
case "$call" in
  1)
    { nvidia-smi; python3 -c 'import torch, transformers, peft, torchvision; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), transformers.__version__, peft.__version__, torchvision.__version__)'; } >"$work/machine.txt" 2>&1
    dump_graphs 330
    measure traced 240 170 120 tv_resnet18_b64,tv_efficientnet_b0_b32,hf_t5_small_b16,cap16_vit_b_16_b115,cap16_t5_small_b23 --trace "$work/traces"
    measure new-cases 110 80 60 tv_resnet50_b64,tv_densenet121,reentrant,dora ;;
  2)
    dump_graphs 200 --models gpt2,tinyllama,t5_small,bert_mlm
    measure new-cases2 250 200 150 dora,maxbatch16_resnet50,maxbatch16_efficientnet ;;
  3)
    measure batches 200 170 60 tv_resnet18_b4_,tv_resnet18_b8_,tv_resnet18_b16_,tv_resnet18_b32_,tv_resnet50_b32_ --trace "$work/traces" ;;
  4)
    measure vit 200 170 80 tv_vit_b_16_b16_,tv_vit_b_16_b32_,tv_vit_b_16_b64_,cap16_vit_b_16_b116 --trace "$work/traces"
    measure peft 150 130 60 reentrant,hf_tinyllama_b4_t1024_lora_bf16base,hf_tinyllama_b4_t1024_lora_saved,hf_tinyllama_cls_b1 ;;
  6)
    measure stems 200 170 80 cap16_resnet50_b182,tv_resnet18_b32_224_bf16,tv_convnext_tiny_b32 --trace "$work/traces"
    measure weights 260 220 80 bf16w_ckpt,qlora ;;
  7)
    measure sweep 220 190 60 tv_resnet18_b2_224_fp32,tv_resnet18_b3_224_fp32,tv_resnet18_b16_224_bf16,tv_resnet18_b64_224_bf16,tv_resnet50_b32_224_bf16,tv_convnext_tiny_b16_224_bf16,tv_convnext_tiny_b64_224_bf16 --trace "$work/traces"
    measure llama 120 100 80 hf_tinyllama_b4_t2048_bf16w_ckpt --trace "$work/traces"
    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True measure t5-expandable 80 60 60 hf_t5_small_b16 --trace "$work/traces-expandable"
    timeout -k 5 100 python3 benchmarks/gpu/measure_cuda.py --trace "$work/cuda-traces" --cases temporal_ckpt_frames_b2_t5 2>&1 | tee "$work/cuda.log" ;;
  8)
    measure vgg 150 130 70 tv_vgg16_b16_224_fp16,tv_resnet34_b64_224_bf16,tv_resnet18_b128_224_fp16,tv_vgg16_b4_224_bf16 --trace "$work/traces"
    GB_TRACE_STACKS=python timeout -k 5 60 python3 benchmarks/gpu/measure_cuda.py --no-probe --trace "$work/cuda-traces" --cases temporal_ckpt_frames_b2_t5 2>&1 | tee "$work/cuda.log" ;;
  9)
    measure unseen 130 110 50 tv_resnet50_b64_224_fp16,tv_wide_resnet50_2_b16_224_bf16,tv_resnet152_b32_224_bf16,tv_resnet18_b256_224_bf16,tv_vgg11_bn_b32_224_bf16 --trace "$work/traces"
    measure maxbatch 110 100 100 maxbatch16_resnet34_224_bf16 ;;
  10)
    GB_TRACE_FRAMES=none timeout -k 5 60 python3 benchmarks/gpu/measure_cuda.py --no-probe --trace "$work/cuda-traces" --cases temporal_ckpt_frames_b2_t5 2>&1 | tee "$work/cuda.log"
    measure cap 90 80 80 cap16_resnet34_b902_bf16 --trace "$work/traces" ;;
  11)
    timeout -k 5 120 python3 benchmarks/gpu/measure_cuda.py --no-probe --trace "$work/cuda-traces" --cases resnet50_b16_224_fp16_foreach 2>&1 | tee "$work/cuda.log"
    measure cv4 210 190 70 tv_resnet18_b2_128_fp32,tv_resnet18_b2_160_fp32,cap16_resnet34_b901_bf16,tv_densenet121_b32_224_fp32,tv_resnet50_b8_448_fp32 --trace "$work/traces" ;;
  12)
    measure cv4e 120 100 40 tv_resnet18_b8_448_fp32,tv_resnet50_b64_224_fp32,tv_resnet18_b2_224_fp16,tv_resnet18_b8_224_fp16 --trace "$work/traces"
    measure maxbatch 260 240 125 maxbatch16_densenet121_224_fp32,maxbatch16_wide_resnet50_2_224_bf16 ;;
  13)
    measure cap 100 90 45 cap16_densenet121_b120_fp32,cap16_densenet121_b121_fp32 --trace "$work/traces" ;;
  14)
    measure cap 60 50 45 cap16_resnet50_b181_fp32 --trace "$work/traces" ;;
  15)
    measure fresh 110 100 45 cap16_densenet121_b121_fp32_fresh,cap16_resnet50_b182_fp32_fresh,cap16_resnet34_b902_bf16_fresh --trace "$work/traces"
    measure maxbatch 330 300 90 maxbatch16_resnet152_224_bf16,maxbatch16_vgg16_224_fp16,maxbatch16_convnext_tiny_224_bf16,maxbatch16_mobilenet_v3_large_224_bf16,maxbatch16_resnet50_224_bf16,maxbatch16_vit_b_16_224_bf16,maxbatch16_resnet18_160_fp16 ;;
  16)
    measure vgg 150 130 50 tv_vgg16_b128_224_fp16,cap16_vgg16_b304_fp16,cap16_vgg16_b305_fp16 --trace "$work/traces" ;;
  17)
    measure long 100 90 60 cap16_resnet34_b901_bf16_12steps --trace "$work/traces"
    measure long2 260 230 60 cap16_resnet50_b181_fp32_12steps,cap16_densenet121_b120_fp32_12steps,cap16_vgg16_b304_fp16_12steps,cap16_resnet152_b167_bf16_12steps,cap16_convnext_tiny_b254_bf16_12steps,cap16_resnet50_b352_bf16_12steps,cap16_vit_b_16_b214_bf16_12steps,cap16_resnet18_b718_fp32_12steps ;;
  18)
    measure long 100 90 60 cap16_resnet50_b181_fp32_12steps,cap16_resnet50_b352_bf16_12steps --trace "$work/traces"
    timeout -k 5 130 python3 benchmarks/gpu/conv_sweep.py --out "$work/conv_sweep.json" --budget 95 2>&1 | tee "$work/sweep.log"
    measure maxbatch 130 120 120 maxbatch16_resnet50_224_fp32_12steps ;;
  19)
    measure maxbatch12 420 390 75 maxbatch16_resnet34_224_bf16_12steps,maxbatch16_densenet121_224_fp32_12steps,maxbatch16_vgg16_224_fp16_12steps,maxbatch16_resnet50_224_bf16_12steps,maxbatch16_vit_b_16_224_bf16_12steps,maxbatch16_convnext_tiny_224_bf16_12steps,maxbatch16_resnet152_224_bf16_12steps,maxbatch16_wide_resnet50_2_224_bf16_12steps,maxbatch16_resnet18_224_fp32_12steps,maxbatch16_efficientnet_b0_224_fp32_12steps,maxbatch16_mobilenet_v3_large_224_bf16_12steps,maxbatch16_resnet101_224_fp16_12steps,maxbatch16_vit_b_16_224_fp32_12steps,maxbatch16_resnet18_160_fp16_12steps ;;
  20)
    timeout -k 5 200 python3 benchmarks/gpu/conv_sweep.py --dense --out "$work/conv_sweep_dense.json" --budget 170 2>&1 | tee "$work/sweep.log" ;;
  21)
    measure graphs 100 80 40 graph_upsample_unet_256_b32_fp32,graph_upsample_unet_256_b32_bf16,graph_encoder_w512_t256_b32_fp32,graph_encoder_w512_t256_b32_bf16 --trace "$work/traces"
    measure maxbatch 150 130 70 maxbatch16_upsample_unet_256_fp32,maxbatch16_encoder_w512_t256_bf16 ;;
  22)
    measure graphs 110 90 45 graph_nanogpt124m_b12_t1024_bf16,graph_nanogpt124m_b4_t1024_fp32,graph_swin_t_224_b32_fp32,graph_swin_t_224_b32_bf16 --trace "$work/traces"
    measure maxbatch 150 130 70 maxbatch16_nanogpt124m_bf16,maxbatch16_swin_t_224_fp32 ;;
  23)
    measure gpt2 110 90 45 hf_gpt2_b8_t512_bf16,hf_gpt2_gelu_b8_t512_bf16 --trace "$work/traces" ;;
  24)
    measure masks 150 130 40 graph_masked_encoder_w512_t256_b32_fp32,graph_masked_encoder_w512_t256_b32_bf16,graph_encoder_w512_t256_b32_fp32,graph_encoder_w512_t256_b32_bf16,graph_decoder_w512_t256_m256_b32_bf16 --trace "$work/traces"
    measure maxbatch 130 120 120 maxbatch16_masked_encoder_w512_t256_bf16 ;;
  25)
    measure seqfirst 130 110 60 graph_tutorial_lm_w512_t256_b32_bf16,graph_clip_text_b32_t77_b128_fp16 --trace "$work/traces"
    measure maxbatch 130 120 120 maxbatch16_clip_text_b32_t77_fp16 ;;
  26)
    rnn=$(python3 -c 'import sys; sys.path.insert(0, "benchmarks/gpu"); import measure_real_libraries as m; print(",".join(n for n in m.ALL_CASES if n.startswith("module_")))')
    measure rnn 200 170 30 "$rnn" --trace "$work/traces" ;;
  27)
    measure rules27 230 200 45 hf_qwen3_0_6b_b4_t1024_bf16,hf_qwen3_0_6b_b4_t1024_lora_bf16base,hf_phi3_partial_b1_t2048_lora_bf16base_ckpt,hf_phi3_mini_b1_t4096_lora_bf16base,hf_mistral_7b_b1_t4096_lora_bf16base --trace "$work/traces" ;;
  29)
    measure rules29 230 200 60 hf_olmo3_7b_b1_t8192_lora_bf16base_ckpt,hf_granite_2b_b4_t1024_bf16,hf_granite_2b_b4_t1024_lora_bf16base --trace "$work/traces" ;;
  31)
    measure rules31 200 170 60 hf_mixtral_small_b4_t1024_bf16,hf_mixtral_small_b4_t1024_bf16weights --trace "$work/traces" ;;
  32)
    measure rules32 240 210 60 hf_mistral_7b_gen_b2_p6144_n64,hf_gemma2_2b_gen_b4_p6144_n64,hf_gemma3_1b_gen_b4_p4096_n64,hf_olmo3_7b_gen_b1_p6144_n64 --trace "$work/traces" ;;
  33)
    measure rules33 300 270 60 hf_bert_cls_b16_t512_fp16_padded,hf_gpt2_b8_t512_bf16,hf_gpt2_b8_t512_bf16_padded,hf_tinyllama_b4_t1024_bf16_padded,hf_tinyllama_gen_b16_p512_n128_padded,hf_tinyllama_gen_b16_p64_n1984,hf_tinyllama_gen_b16_p64_n1984_padded --trace "$work/traces" ;;
  34)
    measure rules34 180 150 40 hf_t5_small_b8_t512_fp32,hf_t5_base_b8_t512_bf16,hf_t5_small_b32_t256_bf16,hf_t5_small_b16_t512_bf16_eager,hf_t5_small_b16_t512_bf16_ckpt,hf_t5_small_b16_t512_bf16_padded --trace "$work/traces" ;;
  30)
    measure rules30 230 200 45 hf_gemma2_2b_b2_t1024_bf16,hf_gemma2_2b_b1_t8192_lora_bf16base_ckpt,hf_gemma2_2b_b1_t2048_lora_bf16base_eager --trace "$work/traces" ;;
  28)
    measure rules28 200 170 45 hf_gemma3_1b_b2_t1024_lora_bf16base,hf_gemma3_1b_b2_t1024_lora_bf16base_ckpt,hf_olmo2_1b_b4_t1024_bf16,hf_olmo2_1b_b4_t1024_lora_bf16base --trace "$work/traces" ;;
  5)
    timeout -k 5 "${GB_CALL5_LIMIT:-240}" python3 benchmarks/gpu/measure_cuda.py --trace "$work/traces" \
      --cases resnet18_b2_96_bf16,resnet18_b2_96_fp16,resnet18_b2_96_adamw_fused,bert_base_b2_t64_bf16,gpt2_small_b2_t64_adamw_fused,temporal_64_128_256_b2_t5 \
      2>&1 | tee "$work/traces.log" ;;
esac
if [ -n "$dump" ]; then wait "$dump"; grep -v '^ ' "$work/graphs.log" | cut -c1-300; fi
tar czf "$out/open-questions$call.tgz" -C "$work" . && tar tzvf "$out/open-questions$call.tgz"
