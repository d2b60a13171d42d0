#!/usr/bin/env python3
"""Holds gpubudget-export's descriptions to the zoo's and to PyTorch 2.6 CPU measurements.

    check_export.py GPUBUDGET REPO torch26    export in the PyTorch 2.6 root (exit 77 = skip if absent)
    check_export.py GPUBUDGET REPO committed  the committed graphs of tests/export/data (no torch)

For each model: the exported parameter count equals sum(p.numel()) exactly (the file states it, the
CLI counts the ops'); the exported description's saved-for-backward and peaks agree with the zoo's
description of the same model within 1 % (the CPU reference step of --runtime torch2.6-cpu, and the
default CUDA budget on a T4); where benchmarks/accuracy/reference/pytorch-2.6-cpu.json measured the
same model and configuration, with that measurement (saved +-2 %, peaks +-3 %). Prints the
agreement table; exits 1 on any miss.
"""
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77
ZOO_TOL, SAVED_TOL, PEAK_TOL = 0.01, 0.02, 0.03
PEAKS = ("fwd_bwd_peak_bytes", "step_peak_bytes")

# name, factory, per-sample input, zoo model with its size flags (None: not in the zoo), reference case
TORCH26_MODELS = [
    ("resnet18", "torchvision.models:resnet18", "3,96,96", ["resnet18", "--image-size", "96"], "resnet18_b2_96"),
    ("resnet50", "torchvision.models:resnet50", "3,64,64", ["resnet50", "--image-size", "64"], "resnet50_b2_64"),
    ("mobilenet_v2", "torchvision.models:mobilenet_v2", "3,96,96", ["mobilenet_v2", "--image-size", "96"], "mobilenet_v2_b2_96"),
    ("mobilenet_v3_large", "torchvision.models:mobilenet_v3_large", "3,96,96", ["mobilenet_v3_large", "--image-size", "96"], "mobilenet_v3_large_b2_96"),
    ("efficientnet_b0", "torchvision.models:efficientnet_b0", "3,96,96", ["efficientnet_b0", "--image-size", "96"], "efficientnet_b0_b2_96"),
    ("vgg11_bn", "torchvision.models:vgg11_bn", "3,64,64", ["vgg11_bn", "--image-size", "64"], "vgg11_bn_b2_64"),
    ("bev_unfold_net", "tests.export.custom_models:bev_unfold_net", "3,64,64", None, "bev_unfold_net_b2_64"),
    ("frame_transformer", "tests.export.custom_models:frame_transformer", "3,64,64", None, "frame_transformer_b2_64"),
    ("sdpa_transformer", "tests.export.custom_models:sdpa_transformer", "3,64,64", None, "sdpa_transformer_b2_64"),
    ("eager_transformer", "tests.export.custom_models:eager_transformer", "3,64,64", None, "eager_transformer_b2_64"),
    # class token and position embedding (patch_embedding), F.layer_norm with weight, layer_scale
    ("vit_b_16", "torchvision.models:vit_b_16 --kwargs '{\"image_size\": 96}'", "3,96,96", ["vit_b_16", "--image-size", "96"], "vit_b_16_b2_96"),
    ("convnext_tiny", "torchvision.models:convnext_tiny", "3,64,64", ["convnext_tiny", "--image-size", "64"], "convnext_tiny_b2_64"),
    # not in the zoo; its factory reads tensor data while it builds (RegNet's widths): --build-on-cpu
    ("regnet_y_400mf", "torchvision.models:regnet_y_400mf --build-on-cpu", "3,64,64", None, "regnet_y_400mf_b2_64"),
    # max pools with ceil_mode=True; GoogLeNet without its auxiliary heads (one tensor out)
    ("squeezenet1_1", "torchvision.models:squeezenet1_1", "3,64,64", None, "squeezenet1_1_b2_64"),
    ("googlenet", "torchvision.models:googlenet --kwargs '{\"aux_logits\": false, \"init_weights\": false}'", "3,64,64", None, "googlenet_b2_64"),
    # 1x7 and 7x1 convolutions (kernel_w, padding_w); without the auxiliary head (one tensor out)
    ("inception_v3", "torchvision.models:inception_v3 --kwargs '{\"aux_logits\": false, \"init_weights\": false}'", "3,96,96", None, "inception_v3_b2_96"),
    # x.mean([2, 3]): mean_over two consecutive dimensions
    ("mnasnet1_0", "torchvision.models:mnasnet1_0", "3,64,64", None, "mnasnet1_0_b2_64"),
    # dense blocks: each layer's cat of all earlier features as the zoo's cat(x, layer(x)) chain
    ("densenet121", "torchvision.models:densenet121", "3,64,64", ["densenet121", "--image-size", "64"], "densenet121_b2_64"),
    # x1, x2 = x.chunk(2, dim=1) (chunk), the channel shuffle (reshape, transpose(..., true), reshape); not in the zoo
    ("shufflenet_v2_x0_5", "torchvision.models:shufflenet_v2_x0_5", "3,64,64", None, "shufflenet_v2_x0_5_b2_64"),
    ("shufflenet_v2_x1_0", "torchvision.models:shufflenet_v2_x1_0", "3,64,64", None, "shufflenet_v2_x1_0_b2_64"),
    # 2026-12-06: torchvision models first tried then (Fused-MBConv and stochastic depth, grouped
    # bottlenecks, AlexNet, MobileNetV3-Small, 32-pixel ViT patches, EfficientNet-B3's widths)
    ("efficientnet_v2_s", "torchvision.models:efficientnet_v2_s", "3,64,64", None, "efficientnet_v2_s_b2_64"),
    ("resnext50_32x4d", "torchvision.models:resnext50_32x4d", "3,64,64", None, "resnext50_32x4d_b2_64"),
    ("alexnet", "torchvision.models:alexnet", "3,64,64", None, "alexnet_b2_64"),
    ("mobilenet_v3_small", "torchvision.models:mobilenet_v3_small", "3,64,64", None, "mobilenet_v3_small_b2_64"),
    ("vit_b_32", "torchvision.models:vit_b_32 --kwargs '{\"image_size\": 64}'", "3,64,64", None, "vit_b_32_b2_64"),
    ("efficientnet_b3", "torchvision.models:efficientnet_b3", "3,64,64", None, "efficientnet_b3_b2_64"),
    # Swin (v1): torchvision's ShiftedWindowAttention and PatchMerging mapped whole (window_attention,
    # patch_merging), Permute, torchvision.ops.MLP, StochasticDepth; the zoo's swin_t to the byte
    ("swin_t", "torchvision.models:swin_t", "3,64,64", ["swin_t", "--image-size", "64"], "swin_t_b2_64"),
    # nn.Upsample and F.interpolate (nearest, bilinear; scale_factor and size) -> upsample
    ("upsample_unet", "tests.export.custom_models:upsample_unet", "3,64,64", None, "upsample_unet_b2_64"),
    # nn.PReLU (one weight, one per channel) and nn.PixelShuffle
    ("subpixel_net", "tests.export.custom_models:subpixel_net", "3,64,64", None, "subpixel_net_b2_64"),
    # nn.MaxPool1d, nn.AvgPool1d, F.max_pool1d with ceil_mode, nn.AdaptiveAvgPool1d (max_pool1d, avg_pool1d, adaptive_avg_pool1d)
    ("audio_cnn", "tests.export.custom_models:audio_cnn", "1,4000", None, "audio_cnn_b2_4000"),
    # nn.Unflatten (reshape) between a Linear bottleneck and transposed convolutions
    ("conv_autoencoder", "tests.export.custom_models:conv_autoencoder", "3,64,64", None, "conv_autoencoder_b2_64"),
    # nn.MultiheadAttention called with need_weights=True (the default) -> torch_mha_weights
    ("token_mixer", "tests.export.custom_models:token_mixer", "64,32", None, "token_mixer_b2_t64"),
    ("token_mixer_drop10", "tests.export.custom_models:token_mixer --kwargs '{\"dropout\": 0.1}'", "64,32", None, "token_mixer_drop10_b2_t64"),
    # nn.Dropout2d, nn.Dropout2d(inplace=True), F.dropout1d -> channel_dropout
    ("channel_dropout_net", "tests.export.custom_models:channel_dropout_net", "3,64,64", None, "channel_dropout_net_b2_64"),
    ("metric_embedding", "tests.export.custom_models:metric_embedding", "3,64,64", None, "metric_embedding_b2_64"),
    ("gated_tcn", "tests.export.custom_models:gated_tcn", "16,2000", None, "gated_tcn_b2_2000"),
    # torchvision's video ResNets (T's own kernel, stride, padding; op_rules 2.6 #51-#52 on the CPU)
    ("mc3_18", "torchvision.models.video:mc3_18", "3,8,64,64", None, "mc3_18_b2_8x64"),
    ("r3d_18", "torchvision.models.video:r3d_18", "3,8,64,64", None, "r3d_18_b2_8x64"),
    ("r2plus1d_18", "torchvision.models.video:r2plus1d_18", "3,8,64,64", None, "r2plus1d_18_b2_8x64"),
    # hand-written SE and CBAM gates, padding="same", in-place LeakyReLU/ELU; a 3-D U-Net; ConvTranspose1d
    ("attention_cnn", "tests.export.custom_models:attention_cnn", "3,64,64", None, "attention_cnn_b2_64"),
    ("unet3d", "tests.export.custom_models:unet3d", "1,16,64,64", None, "unet3d_b2_16x64"),
    ("unet3d_trilinear", "tests.export.custom_models:unet3d_trilinear", "1,16,64,64", None, "unet3d_trilinear_b2_16x64"),
    ("wave_autoencoder", "tests.export.custom_models:wave_autoencoder", "1,8000", None, "wave_autoencoder_b2_8000"),
    # timm's Attention (one packed qkv Linear, reshape/permute/unbind, SDPA) and PatchEmbed's tokens
    ("timm_style_vit", "tests.export.custom_models:timm_style_vit", "3,64,64", None, "timm_style_vit_b2_64"),
    # a hand-written ViT (class and position parameters, nn.TransformerEncoder), ConvMixer, pix2pix's
    # PatchGAN (InstanceNorm2d then LeakyReLU(0.2, True): CopySlices, op_rules 2.6 #54)
    ("hand_vit", "tests.export.custom_models:hand_vit", "3,64,64", None, "hand_vit_b2_64"),
    ("conv_mixer", "tests.export.custom_models:conv_mixer", "3,64,64", None, "conv_mixer_b2_64"),
    # a conv1d on the transposed embedding (channels_last_input), torch.max(x, 2)[0], cat (2026-11-29)
    ("text_cnn", "tests.export.custom_models:text_cnn", "--tokens 64 --vocab 2000", None, "text_cnn_b2_t64"),
    # one packed Linear chunked into q, k, v (split_qkv / flash with fused_qkv, qkv_bias false);
    # torch.einsum products read as the matmuls they compute; unbiased q, k, v Linears
    ("einsum_transformer", "tests.export.custom_models:einsum_transformer", "128,64", None, "einsum_transformer_b2_128"),
    ("einsum_transformer_matmul", "tests.export.custom_models:einsum_transformer --kwargs '{\"mode\": \"matmul\"}'", "128,64", None,
     "einsum_transformer_matmul_b2_128"),
    ("einsum_transformer_sdpa", "tests.export.custom_models:einsum_transformer --kwargs '{\"mode\": \"sdpa\"}'", "128,64", None,
     "einsum_transformer_sdpa_b2_128"),
    ("einsum_transformer_unbiased_qkv", "tests.export.custom_models:einsum_transformer --kwargs '{\"mode\": \"unbiased_qkv\"}'", "128,64",
     None, "einsum_transformer_unbiased_qkv_b2_128"),
    ("cifar_resnet18", "tests.export.custom_models:cifar_resnet18", "3,32,32", None, "cifar_resnet18_b2_32"),
    ("mlp_mixer", "tests.export.custom_models:mlp_mixer", "3,32,32", None, "mlp_mixer_b2_32"),
    ("sequence_classifier", "tests.export.custom_models:sequence_classifier", "--tokens 64 --vocab 2000", None, "sequence_classifier_b2_t64"),
    ("sequence_classifier_padded", "tests.export.custom_models:sequence_classifier", "--tokens 64 --vocab 2000 --key-padding-mask", None,
     "sequence_classifier_padded_b2_t64"),
    ("sequence_classifier_pad_id", "tests.export.custom_models:sequence_classifier --kwargs '{\"pad_id\": 0}'", "--tokens 64 --vocab 2000", None,
     "sequence_classifier_pad_id_b2_t64"),
    ("keyword_spotter", "tests.export.custom_models:keyword_spotter", "40,100", None, "keyword_spotter_b2_100"),
    # F.pad by amounts computed from sizes (ValueProp), both up paths; DCGAN's generator and discriminator
    ("milesial_unet", "tests.export.custom_models:milesial_unet", "3,64,64", None, "milesial_unet_b2_64"),
    ("milesial_unet_bilinear", "tests.export.custom_models:milesial_unet --kwargs '{\"bilinear\": true}'", "3,64,64", None,
     "milesial_unet_bilinear_b2_64"),
    ("dcgan_generator", "tests.export.custom_models:dcgan_generator", "100,1,1", None, "dcgan_generator_b2"),
    ("dcgan_discriminator", "tests.export.custom_models:dcgan_discriminator", "3,64,64", None, "dcgan_discriminator_b2_64"),
    # Karpathy's "Let's build GPT" (per-head modules, masked_fill causal masks, cat; torch.export: per_head)
    ("karpathy_gpt", "tests.export.custom_models:karpathy_gpt", "--tokens 256 --vocab 65", None, "karpathy_gpt_b2_t256"),
    # x * w[:, :, None, None] and a regression head's .squeeze(-1) to [B]: views
    ("indexed_se_net", "tests.export.custom_models:indexed_se_net", "3,64,64", None, "indexed_se_net_b2_64"),
    ("residual_regressor", "tests.export.custom_models:residual_regressor", "512", None, "residual_regressor_b2_512"),
    # facebookresearch/ConvNeXt: its channels_first LayerNorm written out (written_layer_norm) and
    # `self.gamma * x` with a (C,) gamma on channels-last (layer_scale(true)); timm's LayerScale on tokens
    ("official_convnext", "tests.export.custom_models:official_convnext", "3,64,64", None, "official_convnext_b2_64"),
    ("token_layer_scale", "tests.export.custom_models:token_layer_scale", "10,16", None, None),
    # x[:, :, :-k].contiguous() (narrow); PointNet's shared MLPs and max over the points
    ("tcn", "tests.export.custom_models:tcn", "8,2000", None, "tcn_b2_2000"),
    ("pointnet", "tests.export.custom_models:pointnet", "3,1024", None, "pointnet_b2_1024"),
    ("sagan_discriminator", "tests.export.custom_models:sagan_discriminator", "3,64,64", None, "sagan_discriminator_b2_64"),
    ("nonlocal_net", "tests.export.custom_models:nonlocal_net", "1,28,28", None, "nonlocal_net_b2_28"),
    ("bilinear_cnn", "tests.export.custom_models:bilinear_cnn", "3,32,32", None, "bilinear_cnn_b2_32"),
    ("pair_scores", "tests.export.custom_models:pair_scores", "512,16", None, "pair_scores_b2_512"),
    ("biggan_discriminator", "tests.export.custom_models:biggan_discriminator", "3,32,32", None, "biggan_discriminator_b2_32"),
    ("tcn_weight_norm", "tests.export.custom_models:tcn --kwargs '{\"weight_norm\": true}'", "8,2000", None, "tcn_weight_norm_b2_2000"),
    ("tcn_weight_norm_parametrization", "tests.export.custom_models:tcn --kwargs '{\"weight_norm\": \"parametrization\"}'", "8,2000", None,
     "tcn_weight_norm_parametrization_b2_2000"),
    ("hifigan_generator", "tests.export.custom_models:hifigan_generator", "80,64", None, "hifigan_generator_b2_64"),
    ("hand_written_mlp", "tests.export.custom_models:hand_written_mlp", "128,64", None, "hand_written_mlp_b2_128"),
    ("difference_cnn", "tests.export.custom_models:difference_cnn", "3,64,64", None, "difference_cnn_b2_64"),
    # tensors on both sides of -, / and torch.maximum; buffers and constants as operands; x.std, x.var
    ("annotated_ff_stack", "tests.export.custom_models:annotated_ff_stack", "128,256", None, "annotated_ff_stack_b2_128"),
    ("normalized_cnn", "tests.export.custom_models:normalized_cnn", "3,64,64", None, "normalized_cnn_b2_64"),
    ("maxout_mlp", "tests.export.custom_models:maxout_mlp", "1,28,28", None, "maxout_mlp_b2"),
    ("written_softmax_mlp", "tests.export.custom_models:written_softmax_mlp", "128,64", None, "written_softmax_mlp_b2_128"),
    ("written_instance_norm_cnn", "tests.export.custom_models:written_instance_norm_cnn", "3,64,64", None, "written_instance_norm_cnn_b2_64"),
    # SKNet's SKConv (softmax over dim 1), branches joined by torch.stack (their gradients strided slices)
    ("sk_net", "tests.export.custom_models:sk_net", "3,64,64", None, "sk_net_b2_64"),
    ("stacked_branches_net", "tests.export.custom_models:stacked_branches_net", "3,64,64", None, "stacked_branches_net_b2_64"),
    # the PyTorch tutorial's spatial transformer (F.affine_grid, F.grid_sample): parameters only; its
    # measured step (spatial_transformer_net_b2_28) peaks 30 % above the budget in conv1's oneDNN
    # backward, whose input needs a gradient behind grid_sample (op_rules.md 2.6 #66: not yet a rule)
    ("spatial_transformer_net", "tests.export.custom_models:spatial_transformer_net", "1,28,28", None, None),
    # auxiliary outputs trained with their own loss: torchvision's GoogLeNet and Inception-v3 in train()
    # (auxiliary_output), a side classifier run before or after the main head (auxiliary_output_last)
    ("googlenet_aux", "tests.export.custom_models:googlenet_aux --build-on-cpu", "3,128,128", None, "googlenet_aux_b2_128"),
    ("inception_v3_aux", "tests.export.custom_models:inception_v3_aux --build-on-cpu", "3,299,299", None, "inception_v3_aux_b2_299"),
    ("side_head_net", "tests.export.custom_models:side_head_net", "3,64,64", None, "side_head_net_b2_64"),
    ("side_head_last_net", "tests.export.custom_models:side_head_net --kwargs '{\"last\": true}'", "3,64,64", None, "side_head_last_net_b2_64"),
    # a conditioning input, forward(x, t): the "diffusion models from scratch" SimpleUnet (conditioned, condition())
    ("simple_unet", "tests.export.custom_models:simple_unet", "3,64,64 --condition timesteps:300", None, "simple_unet_b2_64"),
    ("simple_unet_32", "tests.export.custom_models:simple_unet", "3,32,32 --condition timesteps:300", None, "simple_unet_b2_32"),
    # labml.ai's DDPM blocks (Swish written out in the condition and its branches, `h += ...` in place);
    # a conditional GAN's generator, forward(noise, labels): labels into an nn.Embedding, cat before the noise
    ("labml_unet", "tests.export.custom_models:labml_unet", "3,32,32 --condition timesteps:1000", None, "labml_unet_b2_32"),
    ("cgan_generator", "tests.export.custom_models:cgan_generator", "100 --condition labels:10", None, "cgan_generator_b2"),
    ("cgan_discriminator", "tests.export.custom_models:cgan_discriminator", "1,32,32 --condition labels:10", None, "cgan_discriminator_b2"),
    # pytorch/examples' siamese network, forward(input1, input2): the second image's trunk shares the first's weights
    ("siamese_network", "tests.export.custom_models:siamese_network --build-on-cpu", "1,64,64 --condition 1,64,64", None, "siamese_network_b2_64"),
    ("siamese_network_28", "tests.export.custom_models:siamese_network --build-on-cpu", "1,28,28 --condition 1,28,28", None, "siamese_network_b2_28"),
    # VAEs (gaussian_latent: z = mu + eps * exp(0.5 * logvar), the loss's KL term): pytorch/examples' MLP VAE,
    # AntixK's VanillaVAE-style conv VAE (eps * std + mu)
    ("vae", "tests.export.custom_models:vae", "1,28,28", None, "vae_b2"),
    ("conv_vae", "tests.export.custom_models:conv_vae", "3,64,64", None, "conv_vae_b2_64"),
    ("conv_vae_small", "tests.export.custom_models:conv_vae --kwargs '{\"latent\": 64, \"hidden\": [32, 64, 128, 256]}'", "3,32,32", None, "conv_vae_small_b2_32"),
    # DiT's adaLN-Zero blocks (modulated: each block's adaLN_modulation(c) chunked into shift, scale and
    # gate vectors), forward(x, t) and forward(x, t, y) (two conditioning inputs: c = t_emb + y_emb);
    # DiT-B/2's width on 64x64 latents held out
    ("dit_s2_t", "tests.export.custom_models:dit --kwargs '{\"with_labels\": false}'", "4,32,32 --condition timesteps:1000", None, "dit_s2_t_b2_32"),
    ("dit_s2", "tests.export.custom_models:dit", "4,32,32 --condition timesteps:1000 --condition labels:1000", None, "dit_s2_b2_32"),
    ("dit_b2", "tests.export.custom_models:dit --kwargs '{\"hidden_size\": 768, \"num_heads\": 12, \"input_size\": 64}'",
     "4,64,64 --condition timesteps:1000 --condition labels:1000", None, "dit_b2_b2_64"),
    # openai/guided-diffusion's ResBlocks: scale and shift chunked from one projection of the step's
    # embedding (modulated), and without (h + emb_out); GroupNorm32's x.float() ... .type(x.dtype) and
    # out_layers[1:] (a slice of an nn.Sequential) traced through; class-conditional at 64²; one ResBlock
    # whose skip conv runs after its body (the branches in the order they ran)
    ("guided_diffusion_unet", "tests.export.custom_models:guided_diffusion_unet", "3,32,32 --condition timesteps:1000", None, "guided_diffusion_unet_b2_32"),
    ("guided_diffusion_unet_plain", "tests.export.custom_models:guided_diffusion_unet --kwargs '{\"scale_shift\": false}'", "3,32,32 --condition timesteps:1000",
     None, "guided_diffusion_unet_plain_b2_32"),
    ("guided_diffusion_unet_y", "tests.export.custom_models:guided_diffusion_unet --kwargs '{\"model_channels\": 96, \"num_classes\": 10}'",
     "3,64,64 --condition timesteps:1000 --condition labels:10", None, "guided_diffusion_unet_y_b2_64"),
    ("guided_diffusion_resblock", "tests.export.custom_models:guided_diffusion_resblock", "192,32,32 --condition timesteps:1000", None, "guided_diffusion_resblock_b2_32"),
    # torchvision's Swin V2-T: ShiftedWindowAttentionV2 (cosine attention, cpb_mlp) and PatchMergingV2 mapped
    # whole (window_attention_v2, patch_merging_v2), post-norm blocks; 96² held out
    ("swin_v2_t", "tests.export.custom_models:swin_v2_t --build-on-cpu", "3,64,64", None, "swin_v2_t_b2_64"),
    # torchvision's S3D: 3-D pools whose window over time differs from the one over H, W (kernel_t, stride_t, padding_t)
    ("s3d", "tests.export.custom_models:s3d --build-on-cpu", "3,16,224,224", None, "s3d_b2_16x224"),
    # torchvision's Video Swin: ShiftedWindowAttention3d mapped whole (window_attention_3d: the window shrinks to a
    # 4-frame clip), PatchMerging on [T, H, W, C], PatchEmbed3d's F.pad by zeros; 32 frames (shifted in time) held out
    ("swin3d_t", "tests.export.custom_models:swin3d_t --build-on-cpu", "3,8,64,64", None, "swin3d_t_b2_8x64"),
    ("swin3d_t_32", "tests.export.custom_models:swin3d_t --build-on-cpu", "3,32,64,64", None, "swin3d_t_b2_32x64"),
    # Stable Diffusion's transformer blocks (diffusers' AttnProcessor2_0: cross-attention to the text states,
    # --condition 77,768), GEGLU; a two-level SD UNet, forward(sample, timestep, encoder_hidden_states): the
    # steps' embedding in its ResnetBlock2Ds, the text states in its cross-attention (two conditioning inputs
    # read apart: the sequence outside); the wider ones held out
    ("sd_transformer", "tests.export.custom_models:sd_transformer", "256,320 --condition 77,768", None, "sd_transformer_b2_256"),
    ("sd_transformer_640", "tests.export.custom_models:sd_transformer --kwargs '{\"dim\": 640, \"heads\": 10, \"blocks\": 3}'",
     "64,640 --condition 77,768", None, "sd_transformer_640_b2_64"),
    ("sd_unet", "tests.export.custom_models:sd_unet", "4,32,32 --condition timesteps:1000 --condition 77,768", None, "sd_unet_b2_32"),
    # SD 1.x's whole UNet topology (4 levels, 12 skips, 1x1-conv projections) at widths 32-64 (the example
    # stable_diffusion_unet.cpp writes the 320-1280 one; its budget equals this exporter's graph of it to the byte)
    ("sd15_unet_narrow", "tests.export.custom_models:sd15_unet --kwargs '{\"block_out\": [32, 64, 64, 64]}'",
     "4,32,32 --condition timesteps:1000 --condition 77,768", None, "sd15_unet_narrow_b2_32"),
    ("sd_unet_96", "tests.export.custom_models:sd_unet --kwargs '{\"c0\": 96, \"c1\": 192, \"heads\": 8}'",
     "4,24,24 --condition timesteps:1000 --condition 77,768", None, "sd_unet_96_b2_24"),
    ("swin_v2_t_96", "tests.export.custom_models:swin_v2_t --build-on-cpu", "3,96,96", None, "swin_v2_t_b2_96"),
    # one Conv2d called eight times (DRCN's recursion): shared(id, conv) per call
    ("recursive_conv_net", "tests.export.custom_models:recursive_conv_net", "1,64,64", None, "recursive_conv_net_b2_64"),
    # timm's DropPath as written, and its older form (keep + torch.rand, floor_, x.div(keep) * noise)
    ("drop_path_mlp", "tests.export.custom_models:drop_path_mlp", "128,128", None, "drop_path_mlp_b2_128"),
    ("old_drop_path_cnn", "tests.export.custom_models:old_drop_path_cnn", "3,64,64", None, "old_drop_path_cnn_b2_64"),
    # the annotated transformer's MultiHeadedAttention, its `self.attn = p_attn` deleted (with it: a stop below)
    ("annotated_attention", "tests.export.custom_models:annotated_attention_layer --kwargs '{\"keep_attention\": false, \"d_model\": 128, \"layers\": 2}'",
     "128,128", None, "annotated_attention_b2_128"),
    ("size_checked_unet", "tests.export.custom_models:size_checked_unet", "3,62,62", None, "size_checked_unet_b2_62"),
    ("patchgan", "tests.export.custom_models:patchgan", "3,128,128", None, "patchgan_b2_128"),
    # nn.TransformerEncoder(Layer), mapped whole: post-norm ReLU, pre-norm GELU with a final norm
    ("encoder_stack", "tests.export.custom_models:encoder_stack", "32,16", None, "encoder_stack_b2_t32"),
    ("encoder_stack_prenorm", "tests.export.custom_models:encoder_stack --kwargs '{\"norm_first\": true}'", "32,16", None,
     "encoder_stack_prenorm_b2_t32"),
    # nn.TransformerEncoder with masks: a causal mask made in forward (SDPA's is_causal), a key padding mask
    # (forward's last argument: --key-padding-mask), both (merged: a [B·H, L, L] float mask, kept by the flash kernel)
    ("masked_encoder_causal", "tests.export.custom_models:masked_encoder_stack --kwargs '{\"causal\": true}'", "32,16", None,
     "masked_encoder_causal_b2_t32"),
    ("masked_encoder_padded_nodrop", "tests.export.custom_models:masked_encoder_stack --kwargs '{\"padded\": true, \"dropout\": 0.0}'",
     "32,16 --key-padding-mask", None, "masked_encoder_padded_nodrop_b2_t32"),
    ("masked_encoder_both", "tests.export.custom_models:masked_encoder_stack --kwargs '{\"causal\": true, \"padded\": true}'",
     "32,16 --key-padding-mask", None, "masked_encoder_both_b2_t32"),
    ("masked_encoder_prenorm", "tests.export.custom_models:masked_encoder_stack --kwargs '{\"causal\": true, \"padded\": true, \"dropout\": 0.0, "
     "\"width\": 128, \"heads\": 8, \"norm_first\": true}'", "128,16 --key-padding-mask", None, "masked_encoder_both_nodrop_b4_t128"),
    # nn.MultiheadAttention called with attn_mask, is_causal=True, key_padding_mask, need_weights=False
    ("masked_mha", "tests.export.custom_models:masked_attention_net --kwargs '{\"padded\": true}'", "64,16 --key-padding-mask", None,
     "masked_mha_both_b4_t64"),
    # float [L, L] masks SDPA takes as any mask (square_mask): a band mask through nn.TransformerEncoder (with a padding
    # mask too), and open_clip's causal buffer passed to nn.MultiheadAttention without is_causal
    ("masked_encoder_band", "tests.export.custom_models:masked_encoder_stack --kwargs '{\"band\": 4}'", "32,16", None, "masked_encoder_band_b2_t32"),
    ("masked_encoder_band_padded", "tests.export.custom_models:masked_encoder_stack --kwargs '{\"band\": 4, \"dropout\": 0.0, \"padded\": true}'",
     "32,16 --key-padding-mask", None, "masked_encoder_band_padded_nodrop_b2_t32"),
    ("masked_mha_buffer", "tests.export.custom_models:masked_attention_net --kwargs '{\"buffer_tokens\": 64}'", "64,16", None,
     "masked_mha_buffer_b4_t64"),
    # a mask argument left at its default None: no mask (parameters checked)
    ("optional_mask_encoder", "tests.export.custom_models:optional_mask_encoder", "8,16", None, None),
    # nn.Transformer as a translation model, forward(tgt, src): the target ids the input, the source ids the condition
    ("seq2seq_transformer", "tests.export.custom_models:seq2seq_transformer --kwargs '{\"vocab\": 2000}'", "--tokens 64 --vocab 2000 --condition tokens:48",
     None, "seq2seq_transformer_b2_t64_s48"),
    # on padded batches: src_key_padding_mask, tgt_key_padding_mask and memory_key_padding_mask made in forward from the
    # ids; with dropout 0.1 and without (the flash kernel keeps each attention's mask: the cross-attention's [B·H, 1, S])
    ("seq2seq_padded", "tests.export.custom_models:seq2seq_transformer --kwargs '{\"vocab\": 2000, \"pad_id\": 0}'",
     "--tokens 64 --vocab 2000 --condition tokens:48", None, "seq2seq_transformer_padded_b2_t64_s48"),
    ("seq2seq_padded_nodrop", "tests.export.custom_models:seq2seq_transformer --kwargs '{\"vocab\": 2000, \"pad_id\": 0, \"dropout\": 0.0}'",
     "--tokens 64 --vocab 2000 --condition tokens:48", None, "seq2seq_transformer_padded_nodrop_b2_t64_s48"),
    ("seq2seq_nodrop", "tests.export.custom_models:seq2seq_transformer --kwargs '{\"vocab\": 2000, \"dropout\": 0.0}'",
     "--tokens 64 --vocab 2000 --condition tokens:48", None, "seq2seq_transformer_nodrop_b2_t64_s48"),
    ("seq2seq_seq_first_padded", "tests.export.custom_models:seq2seq_transformer --kwargs '{\"vocab\": 500, \"width\": 256, \"heads\": 8, "
     "\"layers\": 3, \"dropout\": 0.0, \"batch_first\": false, \"pad_id\": 0}'", "--tokens 77 --vocab 500 --condition tokens:64 --sequence-first",
     None, "seq2seq_seq_first_padded_w256_b4_t77_s64"),
    # PyTorch's translation tutorial's Seq2SeqTransformer as written and trained: sequence first, forward(src, trg, and the
    # five masks create_mask makes): --source-first --sequence-first --mask ...; dropout 0.1 and 0
    ("translation_tutorial", "tests.export.custom_models:translation_tutorial",
     "--tokens 64 --vocab 2000 --condition tokens:48 --source-first --sequence-first --mask src_mask=square:source --mask tgt_mask=causal --mask src_padding_mask=padding:source --mask tgt_padding_mask=padding --mask memory_key_padding_mask=padding:source", None, "translation_tutorial_b2_t64_s48"),
    ("translation_tutorial_nodrop", "tests.export.custom_models:translation_tutorial --kwargs '{\"dropout\": 0.0}'",
     "--tokens 64 --vocab 2000 --condition tokens:48 --source-first --sequence-first --mask src_mask=square:source --mask tgt_mask=causal --mask src_padding_mask=padding:source --mask tgt_padding_mask=padding --mask memory_key_padding_mask=padding:source", None,
     "translation_tutorial_nodrop_b2_t64_s48"),
    # the same model written forward(src, tgt) (--source-first): the same graph, held to the same measurement
    ("source_first_seq2seq", "tests.export.custom_models:source_first_seq2seq --kwargs '{\"vocab\": 2000}'",
     "--tokens 64 --vocab 2000 --condition tokens:48 --source-first", None, "seq2seq_transformer_b2_t64_s48"),
    # nn.TransformerDecoder over a conditioning memory (its cross-attention: nn.MultiheadAttention across two tensors)
    ("decoder_stack", "tests.export.custom_models:decoder_stack", "32,16 --condition 48,64", None, "decoder_stack_b2_t32_m48"),
    ("decoder_stack_prenorm", "tests.export.custom_models:decoder_stack --kwargs '{\"width\": 128, \"heads\": 8, \"norm_first\": true, "
     "\"dropout\": 0.0}'", "64,16 --condition 96,128", None, "decoder_stack_prenorm_b4_t64_m96"),
    # hand-written SDPA with is_causal=True: the flash kernel, and the math path with dropout_p 0.1
    ("sdpa_transformer_causal", "tests.export.custom_models:sdpa_transformer --kwargs '{\"causal\": true}'", "3,64,64", None,
     "sdpa_transformer_causal_b2_64"),
    ("sdpa_transformer_causal_drop10", "tests.export.custom_models:sdpa_transformer --kwargs '{\"causal\": true, \"dropout\": 0.1}'",
     "3,64,64", None, "sdpa_transformer_causal_drop10_b2_64"),
    # its unmasked twin (`h + attn(...)[0]`: out_proj's backward copies the gradient, op_rules.md CT10 d)
    ("unmasked_mha", "tests.export.custom_models:masked_attention_net --kwargs '{\"causal\": false}'", "64,16", None, "masked_mha_none_b4_t64"),
    # need_weights left True (the weights dropped: `a, _ = attn(...)`): baddbmm(mask, q, kᵀ) on the materialized path
    ("masked_mha_weights", "tests.export.custom_models:masked_attention_net --kwargs '{\"padded\": true, \"weights\": true}'",
     "64,16 --key-padding-mask", None, "masked_mha_weights_both_b4_t64"),
    # sequence first (--sequence-first: [L, B] ids, nn.Transformer's default batch_first=False): PyTorch's
    # nn.Transformer language-model tutorial (pe[:x.size(0)] traced with the example's sizes), its batch-first
    # twin (torch.export refuses it too), nn.MultiheadAttention(batch_first=False) called directly, nn.Transformer
    # on [T, B] and [S, B] ids; OpenAI CLIP's text tower (x.permute(1, 0, 2) around sequence-first blocks: batch_transpose)
    ("tutorial_lm", "tests.export.custom_models:tutorial_transformer_lm", "--tokens 64 --vocab 2000 --sequence-first", None, "tutorial_lm_b2_t64"),
    ("tutorial_lm_batch_first", "tests.export.custom_models:tutorial_transformer_lm --kwargs '{\"batch_first\": true}'", "--tokens 64 --vocab 2000",
     None, "tutorial_lm_batch_first_b2_t64"),
    ("seq_first_mha", "tests.export.custom_models:masked_attention_net --kwargs '{\"causal\": false, \"batch_first\": false}'",
     "64,16 --sequence-first", None, "seq_first_mha_none_b4_t64"),
    ("seq_first_mha_weights", "tests.export.custom_models:masked_attention_net --kwargs '{\"causal\": false, \"weights\": true, \"batch_first\": false}'",
     "64,16 --sequence-first", None, "seq_first_mha_weights_b4_t64"),
    ("seq_first_mha_both", "tests.export.custom_models:masked_attention_net --kwargs '{\"padded\": true, \"batch_first\": false}'",
     "64,16 --sequence-first --key-padding-mask", None, "seq_first_mha_both_b4_t64"),
    ("seq2seq_seq_first", "tests.export.custom_models:seq2seq_transformer --kwargs '{\"vocab\": 2000, \"batch_first\": false}'",
     "--tokens 64 --vocab 2000 --condition tokens:48 --sequence-first", None, "seq2seq_transformer_seq_first_b2_t64_s48"),
    ("clip_text", "tests.export.custom_models:clip_text_tower", "--tokens 64 --vocab 2000", None, "clip_text_b2_t64"),
    # pytorch/examples' word_language_model TransformerModel as written: forward(src, has_mask=True) traced at the
    # default, its causal mask log(tril(ones)) made on the CPU, moved, and cached on the module (a constant it keeps)
    ("word_language_model", "tests.export.custom_models:word_language_model", "--tokens 64 --vocab 2000 --sequence-first", None,
     "word_language_model_b2_t64"),
    ("clip_text_w128", "tests.export.custom_models:clip_text_tower --kwargs '{\"vocab\": 500, \"context\": 77, \"width\": 128, \"heads\": 8, "
     "\"layers\": 3}'", "--tokens 77 --vocab 500", None, "clip_text_w128_b4_t77"),
    # nanoGPT's GPT (torch.fx cannot trace it): torch.export's ATen graph, model(ids, targets) with its
    # own cross-entropy (--targets); a flag list in place of the input shape
    ("nanogpt", "tests.export.custom_models:nanogpt", "--tokens 64 --vocab 2000 --targets", None, "nanogpt_b2_t64"),
    # minGPT (its manual causal attention: masked_fill from a tril buffer; NewGELU written out: gelu_new)
    ("mingpt", "tests.export.custom_models:mingpt", "--tokens 64 --vocab 2000 --targets", None, "mingpt_b2_t64"),
    ("nanogpt_drop10", "tests.export.custom_models:nanogpt --kwargs '{\"dropout\": 0.1}'", "--tokens 64 --vocab 2000 --targets", None,
     "nanogpt_drop10_b2_t64"),
    # FX traces this one (positions from a buffer); its causal SDPA stops FX's patterns, and the
    # torch.export reader takes it: parameters checked (its graph is nanogpt's, the logits returned)
    ("buffer_positions_gpt", "tests.export.custom_models:buffer_positions_gpt", "--tokens 64 --vocab 2000", None, None),
    ("nanogpt_nobias", "tests.export.custom_models:nanogpt --kwargs '{\"bias\": false}'", "--tokens 64 --vocab 2000 --targets", None,
     "nanogpt_nobias_b2_t64"),
    ("nanogpt_l5", "tests.export.custom_models:nanogpt --kwargs '{\"n_layer\": 5}'", "--tokens 64 --vocab 2000 --targets", None,
     "nanogpt_l5_b2_t64"),
    # torchvision's segmentation models return {"out": y} (aux_loss off): that one tensor; dilated
    # convolutions, F.interpolate(size=input, bilinear) by 8. Parameters checked (no measurement)
    ("fcn_resnet50", "torchvision.models.segmentation:fcn_resnet50 --kwargs '{\"weights_backbone\": null, \"aux_loss\": false}'",
     "3,64,64", None, None),
    # DeepLabV3's ASPP: dilated 3x3 convolutions, a global pool upsampled back to the map (1 -> 4: a whole factor)
    ("deeplabv3_mobilenet_v3_large",
     "torchvision.models.segmentation:deeplabv3_mobilenet_v3_large --kwargs '{\"weights_backbone\": null, \"aux_loss\": false}'",
     "3,64,64", None, None),
]
# name, file in tests/export/data, zoo model with its size flags, measured case (data/custom-pytorch-2.6-cpu.json)
COMMITTED = [("resnet18", "resnet18.json", ["resnet18"], None),
             ("efficientnet_v2_s", "efficientnet_v2_s.json", None, "efficientnet_v2_s_b2_64"),
             ("resnext50_32x4d", "resnext50_32x4d.json", None, "resnext50_32x4d_b2_64"),
             ("alexnet", "alexnet.json", None, "alexnet_b2_64"),
             ("mobilenet_v3_small", "mobilenet_v3_small.json", None, "mobilenet_v3_small_b2_64"),
             ("vit_b_32", "vit_b_32.json", None, "vit_b_32_b2_64"),
             ("efficientnet_b3", "efficientnet_b3.json", None, "efficientnet_b3_b2_64"), ("bev_unfold_net", "bev_unfold_net.json", None, "bev_unfold_net_b2_64"),
             ("frame_transformer", "frame_transformer.json", None, "frame_transformer_b2_64"),
             ("sdpa_transformer", "sdpa_transformer.json", None, "sdpa_transformer_b2_64"),
             ("eager_transformer", "eager_transformer.json", None, "eager_transformer_b2_64"),
             ("vit_b_16", "vit_b_16.json", ["vit_b_16", "--image-size", "96"], "vit_b_16_b2_96"),
             ("convnext_tiny", "convnext_tiny.json", ["convnext_tiny", "--image-size", "64"], "convnext_tiny_b2_64"),
             ("token_lm", "token_lm.json", None, "token_lm_b2_t64"),
             ("grouped_net", "grouped_net.json", None, "grouped_net_b2_64"),
             ("upsample_unet", "upsample_unet.json", None, "upsample_unet_b2_64"),
             ("subpixel_net", "subpixel_net.json", None, "subpixel_net_b2_64"),
             ("audio_cnn", "audio_cnn.json", None, "audio_cnn_b2_4000"),
             ("conv_autoencoder", "conv_autoencoder.json", None, "conv_autoencoder_b2_64"),
             ("token_mixer", "token_mixer.json", None, "token_mixer_b2_t64"),
             ("channel_dropout_net", "channel_dropout_net.json", None, "channel_dropout_net_b2_64"),
             ("metric_embedding", "metric_embedding.json", None, "metric_embedding_b2_64"),
             ("gated_tcn", "gated_tcn.json", None, "gated_tcn_b2_2000"),
             ("mc3_18", "mc3_18.json", None, "mc3_18_b2_8x64"),
             ("r3d_18", "r3d_18.json", None, "r3d_18_b2_8x64"),
             ("r3d_18 (16 x 112²)", "r3d_18_16x112.json", None, "r3d_18_b2_16x112"),
             ("r2plus1d_18", "r2plus1d_18.json", None, "r2plus1d_18_b2_8x64"),
             ("attention_cnn", "attention_cnn.json", None, "attention_cnn_b2_64"),
             ("unet3d", "unet3d.json", None, "unet3d_b2_16x64"),
             ("unet3d (12 channels)", "unet3d_c12.json", None, "unet3d_c12_b2_24x48"),
             ("unet3d_trilinear", "unet3d_trilinear.json", None, "unet3d_trilinear_b2_16x64"),
             ("wave_autoencoder", "wave_autoencoder.json", None, "wave_autoencoder_b2_8000"),
             ("timm_style_vit", "timm_style_vit.json", None, "timm_style_vit_b2_64"),
             ("hand_vit", "hand_vit.json", None, "hand_vit_b2_64"),
             ("conv_mixer", "conv_mixer.json", None, "conv_mixer_b2_64"),
             ("text_cnn", "text_cnn.json", None, "text_cnn_b2_t64"),
             ("einsum_transformer", "einsum_transformer.json", None, "einsum_transformer_b2_128"),
             ("einsum_transformer_matmul", "einsum_transformer_matmul.json", None, "einsum_transformer_matmul_b2_128"),
             ("einsum_transformer_sdpa", "einsum_transformer_sdpa.json", None, "einsum_transformer_sdpa_b2_128"),
             ("einsum_transformer_unbiased_qkv", "einsum_transformer_unbiased_qkv.json", None, "einsum_transformer_unbiased_qkv_b2_128"),
             ("cifar_resnet18", "cifar_resnet18.json", None, "cifar_resnet18_b2_32"),
             ("mlp_mixer", "mlp_mixer.json", None, "mlp_mixer_b2_32"),
             ("sequence_classifier", "sequence_classifier.json", None, "sequence_classifier_b2_t64"),
             ("sequence_classifier_padded", "sequence_classifier_padded.json", None, "sequence_classifier_padded_b2_t64"),
             ("sequence_classifier_pad_id", "sequence_classifier_pad_id.json", None, "sequence_classifier_pad_id_b2_t64"),
             ("keyword_spotter", "keyword_spotter.json", None, "keyword_spotter_b2_100"),
             ("milesial_unet", "milesial_unet.json", None, "milesial_unet_b2_64"),
             ("milesial_unet_bilinear", "milesial_unet_bilinear.json", None, "milesial_unet_bilinear_b2_64"),
             ("dcgan_generator", "dcgan_generator.json", None, "dcgan_generator_b2"),
             ("dcgan_discriminator", "dcgan_discriminator.json", None, "dcgan_discriminator_b2_64"),
             ("karpathy_gpt", "karpathy_gpt.json", None, "karpathy_gpt_b2_t256"),
             ("indexed_se_net", "indexed_se_net.json", None, "indexed_se_net_b2_64"),
             ("residual_regressor", "residual_regressor.json", None, "residual_regressor_b2_512"),
             ("official_convnext", "official_convnext.json", None, "official_convnext_b2_64"),
             ("tcn", "tcn.json", None, "tcn_b2_2000"), ("pointnet", "pointnet.json", None, "pointnet_b2_1024"),
             ("sagan_discriminator", "sagan_discriminator.json", None, "sagan_discriminator_b2_64"),
             ("nonlocal_net", "nonlocal_net.json", None, "nonlocal_net_b2_28"), ("bilinear_cnn", "bilinear_cnn.json", None, "bilinear_cnn_b2_32"),
             ("pair_scores", "pair_scores.json", None, "pair_scores_b2_512"),
             ("biggan_discriminator", "biggan_discriminator.json", None, "biggan_discriminator_b2_32"),
             ("tcn_weight_norm", "tcn_weight_norm.json", None, "tcn_weight_norm_b2_2000"),
             ("tcn_weight_norm_parametrization", "tcn_weight_norm_parametrization.json", None, "tcn_weight_norm_parametrization_b2_2000"),
             ("hifigan_generator", "hifigan_generator.json", None, "hifigan_generator_b2_64"),
             ("hand_written_mlp", "hand_written_mlp.json", None, "hand_written_mlp_b2_128"),
             ("difference_cnn", "difference_cnn.json", None, "difference_cnn_b2_64"),
             ("annotated_ff_stack", "annotated_ff_stack.json", None, "annotated_ff_stack_b2_128"),
             ("normalized_cnn", "normalized_cnn.json", None, "normalized_cnn_b2_64"),
             ("maxout_mlp", "maxout_mlp.json", None, "maxout_mlp_b2"),
             ("written_softmax_mlp", "written_softmax_mlp.json", None, "written_softmax_mlp_b2_128"),
             ("written_instance_norm_cnn", "written_instance_norm_cnn.json", None, "written_instance_norm_cnn_b2_64"),
             ("sk_net", "sk_net.json", None, "sk_net_b2_64"),
             ("stacked_branches_net", "stacked_branches_net.json", None, "stacked_branches_net_b2_64"),
             ("annotated_attention", "annotated_attention.json", None, "annotated_attention_b2_128"),
             ("spatial_transformer_net", "spatial_transformer_net.json", None, None),
             ("recursive_conv_net", "recursive_conv_net.json", None, "recursive_conv_net_b2_64"),
             ("googlenet_aux", "googlenet_aux.json", None, "googlenet_aux_b2_128"),
             ("simple_unet", "simple_unet.json", None, "simple_unet_b2_64"),
             ("labml_unet", "labml_unet.json", None, "labml_unet_b2_32"),
             ("cgan_generator", "cgan_generator.json", None, "cgan_generator_b2"),
             ("cgan_discriminator", "cgan_discriminator.json", None, "cgan_discriminator_b2"),
             ("siamese_network", "siamese_network.json", None, "siamese_network_b2_64"),
             ("vae", "vae.json", None, "vae_b2"),
             ("conv_vae", "conv_vae.json", None, "conv_vae_b2_64"),
             ("conv_vae_small", "conv_vae_small.json", None, "conv_vae_small_b2_32"),
             ("dit_s2_t", "dit_s2_t.json", None, "dit_s2_t_b2_32"),
             ("dit_s2", "dit_s2.json", None, "dit_s2_b2_32"),
             ("dit_b2", "dit_b2.json", None, "dit_b2_b2_64"),
             ("guided_diffusion_unet", "guided_diffusion_unet.json", None, "guided_diffusion_unet_b2_32"),
             ("guided_diffusion_unet_plain", "guided_diffusion_unet_plain.json", None, "guided_diffusion_unet_plain_b2_32"),
             ("guided_diffusion_unet_y", "guided_diffusion_unet_y.json", None, "guided_diffusion_unet_y_b2_64"),
             ("guided_diffusion_resblock", "guided_diffusion_resblock.json", None, "guided_diffusion_resblock_b2_32"),
             ("swin_v2_t", "swin_v2_t.json", None, "swin_v2_t_b2_64"),
             ("s3d", "s3d.json", None, "s3d_b2_16x224"),
             ("swin3d_t", "swin3d_t.json", None, "swin3d_t_b2_8x64"),
             ("swin3d_t_32", "swin3d_t_32.json", None, "swin3d_t_b2_32x64"),
             ("sd_transformer", "sd_transformer.json", None, "sd_transformer_b2_256"),
             ("sd_transformer_640", "sd_transformer_640.json", None, "sd_transformer_640_b2_64"),
             ("sd_unet", "sd_unet.json", None, "sd_unet_b2_32"),
             ("sd15_unet_narrow", "sd15_unet_narrow.json", None, "sd15_unet_narrow_b2_32"),
             ("sd_unet_96", "sd_unet_96.json", None, "sd_unet_96_b2_24"),
             ("swin_v2_t_96", "swin_v2_t_96.json", None, "swin_v2_t_b2_96"),
             ("inception_v3_aux", "inception_v3_aux.json", None, "inception_v3_aux_b2_299"),
             ("side_head_net", "side_head_net.json", None, "side_head_net_b2_64"),
             ("side_head_last_net", "side_head_last_net.json", None, "side_head_last_net_b2_64"),
             ("drop_path_mlp", "drop_path_mlp.json", None, "drop_path_mlp_b2_128"),
             ("old_drop_path_cnn", "old_drop_path_cnn.json", None, "old_drop_path_cnn_b2_64"),
             ("size_checked_unet", "size_checked_unet.json", None, "size_checked_unet_b2_62"),
             ("patchgan", "patchgan.json", None, "patchgan_b2_128"),
             ("inception_v3", "inception_v3.json", None, "inception_v3_b2_96"),
             ("encoder_stack", "encoder_stack.json", None, "encoder_stack_b2_t32"),
             ("encoder_stack_prenorm", "encoder_stack_prenorm.json", None, "encoder_stack_prenorm_b2_t32"),
             ("masked_encoder_causal", "masked_encoder_causal.json", None, "masked_encoder_causal_b2_t32"),
             ("masked_encoder_padded_nodrop", "masked_encoder_padded_nodrop.json", None, "masked_encoder_padded_nodrop_b2_t32"),
             ("masked_encoder_both", "masked_encoder_both.json", None, "masked_encoder_both_b2_t32"),
             ("masked_encoder_prenorm", "masked_encoder_prenorm.json", None, "masked_encoder_both_nodrop_b4_t128"),
             ("masked_mha", "masked_mha.json", None, "masked_mha_both_b4_t64"),
             ("unmasked_mha", "unmasked_mha.json", None, "masked_mha_none_b4_t64"),
             ("masked_mha_weights", "masked_mha_weights.json", None, "masked_mha_weights_both_b4_t64"),
             ("masked_encoder_band", "masked_encoder_band.json", None, "masked_encoder_band_b2_t32"),
             ("masked_encoder_band_padded", "masked_encoder_band_padded.json", None, "masked_encoder_band_padded_nodrop_b2_t32"),
             ("masked_mha_buffer", "masked_mha_buffer.json", None, "masked_mha_buffer_b4_t64"),
             ("decoder_stack", "decoder_stack.json", None, "decoder_stack_b2_t32_m48"),
             ("seq2seq_transformer", "seq2seq_transformer.json", None, "seq2seq_transformer_b2_t64_s48"),
             ("decoder_stack_prenorm", "decoder_stack_prenorm.json", None, "decoder_stack_prenorm_b4_t64_m96"),
             ("tutorial_lm", "tutorial_lm.json", None, "tutorial_lm_b2_t64"),
             ("tutorial_lm_w256", "tutorial_lm_w256.json", None, "tutorial_lm_w256_b4_t77"),
             ("seq_first_mha", "seq_first_mha.json", None, "seq_first_mha_none_b4_t64"),
             ("seq_first_mha_both", "seq_first_mha_both.json", None, "seq_first_mha_both_b4_t64"),
             ("seq2seq_seq_first", "seq2seq_seq_first.json", None, "seq2seq_transformer_seq_first_b2_t64_s48"),
             ("clip_text", "clip_text.json", None, "clip_text_b2_t64"),
             ("word_language_model", "word_language_model.json", None, "word_language_model_b2_t64"),
             ("seq2seq_padded", "seq2seq_padded.json", None, "seq2seq_transformer_padded_nodrop_b2_t64_s48"),
             ("translation_tutorial", "translation_tutorial.json", None, "translation_tutorial_nodrop_b2_t64_s48"),
             ("seq2seq_seq_first_padded", "seq2seq_seq_first_padded.json", None, "seq2seq_seq_first_padded_w256_b4_t77_s64"),
             ("clip_text_w128", "clip_text_w128.json", None, "clip_text_w128_b4_t77"),
             ("sdpa_transformer_causal", "sdpa_transformer_causal.json", None, "sdpa_transformer_causal_b2_64"),
             ("sdpa_transformer_causal_drop10", "sdpa_transformer_causal_drop10.json", None, "sdpa_transformer_causal_drop10_b2_64"),
             ("densenet121", "densenet121.json", ["densenet121", "--image-size", "64"], "densenet121_b2_64"),
             ("shufflenet_v2_x0_5", "shufflenet_v2_x0_5.json", None, "shufflenet_v2_x0_5_b2_64"),
             ("swin_t", "swin_t.json", ["swin_t", "--image-size", "64"], "swin_t_b2_64"),
             ("mingpt", "mingpt.json", None, "mingpt_b2_t64"),
             ("nanogpt", "nanogpt.json", None, "nanogpt_b2_t64"), ("nanogpt_drop10", "nanogpt_drop10.json", None, "nanogpt_drop10_b2_t64"),
             ("nanogpt_nobias", "nanogpt_nobias.json", None, "nanogpt_nobias_b2_t64"),
             # five Blocks exported as one repeat (three copies walked, two stood in for)
             ("nanogpt_l5", "nanogpt_l5.json", None, "nanogpt_l5_b2_t64")]

# other plans on the committed graphs against measure_custom.py's steps: name, graph file, CLI flags,
# zoo model, measured case, known misses. --checkpoint-blocks checkpoints every copy of the
# exported repeat, as a loop of torch.utils.checkpoint(block, x, use_reentrant=False) does
FLAGGED = [("nanogpt_l5 checkpoint blocks", "nanogpt_l5.json", ["--checkpoint-blocks"], None, "nanogpt_l5_ckpt_b2_t64", {}),
           # DiT's blocks each under torch.utils.checkpoint(block, x, c): a modulated block re-run in backward
           ("dit_s2 checkpoint blocks", "dit_s2.json", ["--checkpoint-blocks"], None, "dit_s2_ckpt_b2_32", {}),
           # torchvision's FCN with aux_loss=True (its aux classifier after the main one: auxiliary_output_last);
           # without aux_loss the same backward miss (fcn_resnet50_b2_64: -19.76 %)
           ("fcn_resnet50_aux", "fcn_resnet50_aux.json", [], None, "fcn_resnet50_aux_b2_64",
            {"fwd_bwd_peak_bytes": "layer4's 3x3 convolutions dilated 4 on an 8x8 map rise 9.3 W in oneDNN's backward (op_rules.md 2.6 #67)"}),
           # DeepLabV3-MobileNetV3 with aux_loss=True: ASPP's 3x3 convolutions dilated 12, 24, 36 on a 4x4 map (64² input)
           # each rise 9.16 W (81,032,304 B) in oneDNN's backward, the same CPU-only scratch (#67); params and saved exact
           ("deeplabv3_mobilenet_aux", "deeplabv3_mobilenet_aux.json", [], None, "deeplabv3_mobilenet_aux_b2_64",
            {"fwd_bwd_peak_bytes": "ASPP's dilated 3x3 convolutions, kernel extent > map, rise 9.16 W in oneDNN's backward (op_rules.md 2.6 #67): -55 %",
             "step_peak_bytes": "the same (op_rules.md 2.6 #67): -46 %"})]

# --lora on the committed graphs (models::get_peft_model) against the PEFT-style steps of
# measure_custom.py: name, graph file, --lora spec, zoo model with its size flags, measured case,
# and the fields that miss, each with what the measurement showed (known misses: printed, not failed)
LORA = [# a frozen base's backward GEMM beside a waiting input gradient: op_rules.md 2.6 #41
        ("sdpa_transformer lora mlp r4", "sdpa_transformer.json", "r=4,targets=mlp.0,mlp.2", None, "sdpa_transformer_lora_mlp_r4_b2_64", {}),
        ("sdpa_transformer lora mlp r4 dropout", "sdpa_transformer.json", "r=4,targets=mlp.0,mlp.2,dropout=0.1", None,
         "sdpa_transformer_lora_mlp_r4_drop10_b2_64", {}),
        ("vit_b_16 lora mlp r8", "vit_b_16.json", "r=8,targets=mlp.0,mlp.3", ["vit_b_16", "--image-size", "96"], "vit_b_16_lora_mlp_r8_b2_96", {}),
        # a frozen encoder's forward: op_rules.md CT11 (what the Python frames keep)
        ("vit_b_16 lora head r8", "vit_b_16.json", "r=8,targets=head", ["vit_b_16", "--image-size", "96"], "vit_b_16_lora_head_r8_b2_96", {}),
        # PEFT's lora.Conv2d on every BasicBlock's conv2
        ("resnet18 lora conv2 r8", "resnet18.json", "r=8,targets=conv2", ["resnet18"], "resnet18_lora_conv2_r8_b2_224", {}),
        # PEFT's lora.Embedding: the frozen blocks backpropagate to the embedding's adapter
        ("token_lm lora embed r8", "token_lm.json", "r=8,targets=embed", None, "token_lm_lora_embed_r8_b2_t64", {}),
        ("token_lm lora embed+mlp r8", "token_lm.json", "r=8,targets=embed,mlp.0,mlp.2", None, "token_lm_lora_embed_mlp_r8_b2_t64", {}),
        # PEFT's grouped lora.Conv2d (huggingface/peft#2403): a dense lora_A, lora_B with the base's 8 groups
        ("grouped_net lora conv2 r8", "grouped_net.json", "r=8,targets=conv2", None, "grouped_net_lora_conv2_r8_b2_64", {}),
        ("grouped_net lora conv2 r16", "grouped_net.json", "r=16,targets=conv2", None, "grouped_net_lora_conv2_r16_b2_64", {}),
        # lora.Linear on an attention's own q, k, v, output Linears (the exporter's "projections": parts_named)
        ("sdpa_transformer lora query,value r4", "sdpa_transformer.json", "r=4,targets=query,value", None, "sdpa_transformer_lora_qv_r4_b2_64", {}),
        ("sdpa_transformer lora attention r8 dropout", "sdpa_transformer.json", "r=8,targets=query,key,value,proj,dropout=0.1", None,
         "sdpa_transformer_lora_attn_r8_drop10_b2_64", {}),
        ("eager_transformer lora query,value r4", "eager_transformer.json", "r=4,targets=query,value", None, "eager_transformer_lora_qv_r4_b2_64", {}),
        ("token_lm lora attn.query,attn.value r8", "token_lm.json", "r=8,targets=attn.query,attn.value", None, "token_lm_lora_qv_r8_b2_t64", {}),
        # PEFT's lora.MultiheadAttention: both deltas merged into in_proj_weight and out_proj.weight for the forward
        ("frame_transformer lora mha r8", "frame_transformer.json", "r=8,targets=attn", None, "frame_transformer_lora_mha_r8_b2_64", {}),
        ("frame_transformer lora mha+mlp r8", "frame_transformer.json", "r=8,targets=attn,mlp.0,mlp.3", None, "frame_transformer_lora_mha_mlp_r8_b2_64", {}),
        ("vit_b_16 lora self_attention r8", "vit_b_16.json", "r=8,targets=self_attention", ["vit_b_16", "--image-size", "96"],
         "vit_b_16_lora_mha_r8_b2_96", {}),
        # PEFT's DoRA (use_dora=True) on convolutions (dora_conv: a biased stem, grouped 3x3s) and on an embedding (dora_embedding)
        ("resnet18 dora conv2 r8", "resnet18.json", "r=8,targets=conv2,dora=true", ["resnet18"], "resnet18_dora_conv2_r8_b2_224", {}),
        ("sdpa_transformer dora stem r4", "sdpa_transformer.json", "r=4,targets=stem.0,stem.3,dora=true", None, "sdpa_transformer_dora_stem_r4_b2_64", {}),
        ("grouped_net dora conv2 r8", "grouped_net.json", "r=8,targets=conv2,dora=true", None, "grouped_net_dora_conv2_r8_b2_64", {}),
        # with lora_dropout: the base convolution run again on the dropped input (dora_base_result)
        ("grouped_net dora conv2 r8 dropout", "grouped_net.json", "r=8,targets=conv2,dropout=0.1,dora=true", None,
         "grouped_net_dora_conv2_r8_drop10_b2_64", {}),
        ("sdpa_transformer dora stem r4 dropout", "sdpa_transformer.json", "r=4,targets=stem.0,stem.3,dropout=0.1,dora=true", None,
         "sdpa_transformer_dora_stem_r4_drop10_b2_64", {}),
        ("token_lm dora embed r8", "token_lm.json", "r=8,targets=embed,dora=true", None, "token_lm_dora_embed_r8_b2_t64", {}),
        # DoRA on biased nn.Linear layers (dora_output): base_result - bias; with lora_dropout the dropped
        # input through the base weight again (dora_linear_base_result); MLP linears and an attention's projections
        ("sdpa_transformer dora mlp r4", "sdpa_transformer.json", "r=4,targets=mlp.0,mlp.2,dora=true", None,
         "sdpa_transformer_dora_mlp_r4_b2_64", {}),
        ("sdpa_transformer dora mlp r4 dropout", "sdpa_transformer.json", "r=4,targets=mlp.0,mlp.2,dropout=0.1,dora=true", None,
         "sdpa_transformer_dora_mlp_r4_drop10_b2_64", {}),
        ("token_lm dora attn.query,attn.value r8", "token_lm.json", "r=8,targets=attn.query,attn.value,dora=true", None,
         "token_lm_dora_qv_r8_b2_t64", {}),
        ("token_lm dora attn.query,attn.value r8 dropout", "token_lm.json", "r=8,targets=attn.query,attn.value,dropout=0.1,dora=true", None,
         "token_lm_dora_qv_r8_drop10_b2_t64", {})]


def cli(gpubudget, model_args, extra):
    r = subprocess.run([gpubudget] + model_args + extra, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"gpubudget {' '.join(model_args + extra)} failed ({r.returncode}): {r.stderr.strip()}")
    return json.loads(r.stdout)


def cpu_step(gpubudget, model_args, optimizer, batch=2):
    return cli(gpubudget, model_args, ["--batch", str(batch), "--optimizer", optimizer, "--json", "--runtime", "torch2.6-cpu"])


def cuda_peak(gpubudget, model_args):
    doc = cli(gpubudget, model_args, ["--batch", "8", "--device", "t4", "--format", "json"])
    return doc


def find_number(doc, key):
    """The first value of `key` anywhere in a --format json document."""
    if isinstance(doc, dict):
        if key in doc and isinstance(doc[key], (int, float)):
            return doc[key]
        doc = list(doc.values())
    if isinstance(doc, list):
        for v in doc:
            found = find_number(v, key)
            if found is not None:
                return found
    return None


def err(a, b):
    return (a - b) / b if b else (0.0 if a == 0 else float("inf"))


class Table:
    def __init__(self):
        self.rows, self.failed = [], False

    def check(self, model, field, exported, other, against, tol, known=None):
        """`known`: why this field is a known miss (it must still miss: a fixed one leaves the list)."""
        e = err(exported, other)
        ok = abs(e) <= tol if tol > 0 else exported == other
        if known is not None and ok:
            self.failed = True
            verdict = "**within, but listed as a known miss: take it off the list**"
        elif known is not None:
            verdict = f"known miss: {known}"
        else:
            self.failed |= not ok
            verdict = "ok" if ok else "**MISS**"
        self.rows.append(f"| {model} | {field} | {exported} | {against} {other} | {e * 100:+.2f} % | {verdict} (tolerance {'exact' if tol == 0 else f'{tol * 100:g} %'}) |")

    def print(self):
        print("| model | field | exported | against | error | verdict |\n|---|---|---:|---:|---:|---|")
        print("\n".join(self.rows))


def compare(t, gpubudget, name, graph, stated, zoo_args, ref):
    """The CPU reference step (for-loop step(), fp32; the measured case's optimizer and batch: 2 where
    a zoo model is compared)."""
    batch = ref["batch"] if ref else 2
    if ref and ((zoo_args and batch != 2) or ref.get("precision", "fp32") != "fp32" or ref["optimizer_impl"] != "for_loop"):
        raise SystemExit(f"{name}: the measured case is not an fp32 for-loop step (at batch 2 where a zoo model is compared)")
    optimizer = ref["optimizer"] if ref else "adamw"
    mine = cpu_step(gpubudget, ["--graph", graph], optimizer, batch)
    t.check(name, "params", mine["params"], stated, "sum(p.numel())", 0)
    if zoo_args:
        zoo = cpu_step(gpubudget, zoo_args, optimizer)
        t.check(name, "params", mine["params"], zoo["params"], "zoo", 0)
        for f in ("saved_bytes",) + PEAKS:
            t.check(name, f + " (CPU 2.6)", mine[f], zoo[f], "zoo", ZOO_TOL)
        g, z = cuda_peak(gpubudget, ["--graph", graph]), cuda_peak(gpubudget, zoo_args)
        for key in ("saved_for_backward", "step_peak", "device_total"):
            a, b = find_number(g, key), find_number(z, key)
            if a is None or b is None:
                raise SystemExit(f"--format json has no '{key}'")
            t.check(name, key + " (T4, batch 8)", a, b, "zoo", ZOO_TOL)
    if ref:
        t.check(name, "saved_bytes", mine["saved_bytes"], ref["saved_bytes"], "measured", SAVED_TOL)
        for f in PEAKS:
            t.check(name, f, mine[f], ref[f], "measured", PEAK_TOL)


def compare_flags(t, gpubudget, repo, name, file, flags, zoo_args, case, known, refs):
    """--graph FILE FLAGS (--lora SPEC, --checkpoint-blocks): the CPU reference step against the
    measured step (PEFT-style, checkpointed), and against the zoo model under the same flags."""
    ref = refs[case]
    graph = ["--graph", os.path.join(repo, "tests/export/data", file)] + flags
    mine = cpu_step(gpubudget, graph, ref["optimizer"])
    t.check(name, "params", mine["params"], ref["params"], "measured", 0)
    t.check(name, "trainable", mine["trainable"], ref["trainable"], "measured", 0)
    t.check(name, "saved_bytes", mine["saved_bytes"], ref["saved_bytes"], "measured", SAVED_TOL, known.get("saved_bytes"))
    for f in PEAKS:
        t.check(name, f, mine[f], ref[f], "measured", PEAK_TOL, known.get(f))
    if zoo_args:
        zoo = cpu_step(gpubudget, zoo_args + flags, ref["optimizer"])
        for f in ("params", "trainable", "saved_bytes") + PEAKS:
            t.check(name, f + " (CPU 2.6)", mine[f], zoo[f], "zoo", 0 if f in ("params", "trainable") else ZOO_TOL)


def reference_cases(repo):
    """The 2.6 CPU reference's cases and the custom modules' (tests/export/measure_custom.py)."""
    cases = {}
    for file in ("benchmarks/accuracy/reference/pytorch-2.6-cpu.json", "tests/export/data/custom-pytorch-2.6-cpu.json"):
        with open(os.path.join(repo, file)) as f:
            cases.update({c["case"]: c for c in json.load(f)["cases"]})
    return cases


def run_torch26(gpubudget, repo):
    env = os.path.join(repo, "scripts/torch26-env")
    if subprocess.run([env, "path"], capture_output=True).returncode != 0:
        print("SKIP: the PyTorch 2.6 CPU root is absent (scripts/torch26-env build makes it; needs root)")
        return SKIP
    refs, t = reference_cases(repo), Table()
    # the root sees the repository only (bind-mounted): paths relative to it, the files inside it;
    # every export in one process (tests/export/export_many.py), the unmappable modules last
    with tempfile.TemporaryDirectory(dir=repo, prefix=".export-check-") as tmp:
        outs = [os.path.relpath(os.path.join(tmp, m[0] + ".json"), repo) for m in TORCH26_MODELS]
        jobs = [f"{factory} --path . {shape if shape.startswith('--') else '--input ' + shape} -o {out}"
                for (_, factory, shape, _, _), out in zip(TORCH26_MODELS, outs)]
        jobs += [f"{job} -o " + os.path.relpath(os.path.join(tmp, f"unmappable{i}.json"), repo) for i, (job, _) in enumerate(UNMAPPABLE)]
        r = subprocess.run([env, "run", "python3", "tests/export/export_many.py"] + jobs, capture_output=True, text=True, cwd=repo)
        results = [line.split("\t", 1) for line in r.stdout.splitlines()]
        if r.returncode != 0 or len(results) != len(jobs):
            raise SystemExit(f"export_many.py failed ({r.returncode}): {r.stdout}{r.stderr}")
        for (name, factory, _, zoo_args, case), out, (rc, err) in zip(TORCH26_MODELS, outs, results):
            if rc != "0":
                raise SystemExit(f"gpubudget-export {factory} failed: {err}")
            with open(os.path.join(repo, out)) as f:
                stated = json.load(f)["parameters"]
            compare(t, gpubudget, name, os.path.join(repo, out), stated, zoo_args, refs.get(case) if case else None)
        unmapped_ok = all([unmappable_is_an_error(*res, os.path.join(repo, job.split(" -o ")[1]), want)
                           for res, job, (_, want) in zip(results[len(TORCH26_MODELS):], jobs[len(TORCH26_MODELS):], UNMAPPABLE)])
    t.print()
    return 1 if t.failed or not unmapped_ok else 0


# exports that must stop (exit 2, no file) with this message: an op with no counterpart, and a
# pattern that is almost a recognised one (SDPA with is_causal=True, a layer scale of another shape)
UNMAPPABLE = [
    # further outputs are auxiliary heads: not one the first output is computed from
    ("tests.export.custom_models:features_too --path . --input 64",
     "the model returns body_1 and a result computed from it (further outputs are budgeted as auxiliary heads trained with a loss of their own"),
    # a reparameterized latent whose mu and logvar the model does not return (the loss's KL term could not read them)
    ("tests.export.custom_models:vae_z_only --path . --input 1,28,28",
     "a reparameterized latent (z = mu + randn_like * exp(0.5 * logvar)) whose mu and logvar the model does not return"),
    # a key padding mask the model also reads itself (x * ~pad): the library reads it only as the attention's
    ("tests.export.custom_models:mask_multiplied_in --path . --input 8,16 --key-padding-mask",
     "the key padding mask (--key-padding-mask) is read by invert, TransformerEncoderLayer"),
    # a bool causal mask given to nn.TransformerEncoderLayer without is_causal=True (converted per call, then any mask to SDPA)
    ("tests.export.custom_models:layer_mask_without_causal --path . --input 8,16",
     "TransformerEncoderLayer called with an attn_mask of shape [8, 8] and type torch.bool"),
    # forward(x, t) without --condition
    ("tests.export.custom_models:simple_unet --path . --input 3,32,32",
     "SimpleUnet.forward takes 2 inputs (x, timestep): give --condition for the second"),
    # two conditioning inputs the model reads apart (no one tensor computed from both); three conditioning inputs
    ("tests.export.custom_models:conditions_apart --path . --input 16 --condition timesteps:100 --condition labels:10",
     "the model reads its conditioning inputs apart, not one tensor computed from them"),
    ("tests.export.custom_models:dit --path . --input 4,32,32 --condition timesteps:1000 --condition labels:1000 --condition 8",
     "--condition given more than twice"),
    # control flow on values: the symbolic trace and the one with the example's sizes both fail, both said
    ("tests.export.custom_models:value_branch --path . --input 8",
     "symbolically traced variables cannot be used as inputs to control flow; torch.fx cannot trace the model with the example's sizes"),
    # a 4-D product of two activations (torch.matmul folds its batch dimensions by a reshape)
    ("tests.export.custom_models:head_pair_scores --path . --input 10,16",
     "einsum 'bhic,bhjc->bhij' (outside the attention patterns) of tensors of shapes [[2, 2, 10, 8], [2, 2, 8, 10]] (the library multiplies two 3-D activations, [B, n, k] @ [B, k, m]) (node matmul, module <root>)"),
    # SDPA given the causal mask as a bool attn_mask (is_causal=True maps: causal_mask)
    ("tests.export.custom_models:sdpa_transformer --path . --input 3,64,64 --kwargs '{\"causal\": \"mask\"}'",
     "no gpubudget op for call_function scaled_dot_product_attention (node scaled_dot_product_attention, module blocks.0.attn)"),
    # torch.cat([x], 1) outside a dense block: a copy with no op
    ("tests.export.custom_models:lone_cat --path . --input 3,16,16",
     "torch.cat of one tensor (a copy; no gpubudget op) (node cat, module <root>)"),
    # chunks of unequal size (torch.chunk's last part smaller)
    ("tests.export.custom_models:uneven_chunk --path . --input 3,16,16",
     "chunk(3, dim=1) of size 8 (the library's chunks are equal parts: the count must divide it) (node chunk, module <root>)"),
    # interpolation the library does not have, and a sequence-first encoder layer
    ("tests.export.custom_models:bicubic_up --path . --input 3,16,16",
     "interpolation mode 'bicubic' (the library has nearest, bilinear and trilinear) (node interpolate, module <root>)"),
    # timm's eager attention path (q * scale, q @ k.transpose, softmax, @ v on a packed qkv split)
    ("tests.export.custom_models:timm_eager_attention --path . --input 10,32",
     "permute [2, 0, 3, 1, 4] moves the batch dimension (a packed qkv split as timm's is recognised when its q, k, v feed F.scaled_dot_product_attention)"),
    ("tests.export.custom_models:circular_pad --path . --input 3,16,16",
     "pad (1, 1, 1, 1) mode 'circular' on 3 dimensions per sample (the library pads [C, L] or [C, H, W] by non-negative amounts, constant, reflect or replicate) (node pad, module <root>)"),
    # weight_norm on a Linear (the library's weight_norm is a convolution's)
    ("tests.export.custom_models:weight_normed_mlp --path . --input 8",
     "Linear under a parametrization or weight_norm other than a convolution's over dim 0 (its weight recomputed every forward: not modelled) (node _0, module 0)"),
    # a number divided by a tensor (`1.0 / x`): not the divide merge, and not a scale
    ("tests.export.custom_models:number_over_tensor --path . --input 8",
     "a number divided by a tensor (c / x: no gpubudget op; x.reciprocal() is elementwise(unary_fn::reciprocal)) (node truediv, module 1)"),
    # a module that keeps a tensor of its forward on itself (the annotated transformer's self.attn = p_attn)
    ("tests.export.custom_models:annotated_attention_layer --path . --input 16,64",
     "MultiHeadedAttention 0.self_attn keeps a tensor of its forward on itself (self.attn = ...): it stays on the device until the next forward replaces it"),
    # torch.max over all elements (a number per sample is no op; torch.max(a, b) is torch.maximum)
    ("tests.export.custom_models:global_max_head --path . --input 16",
     "torch.max other than of two tensors or a max's values over one dimension (no gpubudget op) (node max_1, module 1)"),
    # recurrent layers: no op
    ("tests.export.custom_models:lstm_tagger --path . --input 12,16",
     "no gpubudget op for module LSTM (recurrent layers are not modelled) (node lstm, module lstm)"),
    # a sequence-first encoder given batch-first inputs (no --sequence-first): PyTorch would read the batch as tokens
    ("tests.export.custom_models:seq_first_encoder --path . --input 12,16",
     "TransformerEncoder(batch_first=False) on a tensor whose batch is dimension 0 (PyTorch would read the batch as tokens; "
     "give --sequence-first when the model takes [L, B, ...] inputs) (node _0, module 0)"),
    # sequence-first logits flattened with the batch (output.view(-1, ntoken)): no per-sample shape
    ("tests.export.custom_models:tutorial_transformer_lm --path . --tokens 64 --vocab 2000 --sequence-first --kwargs '{\"flat_logits\": true}'",
     "Tensor.view gives [128, 2000], the batch of a sequence-first tensor merged into another dimension"),
    # a memory_mask on the decoder's cross-attention (its key padding mask is modelled, an attn_mask over the memory is not)
    ("tests.export.custom_models:memory_masked_decoder --path . --input 32,16 --condition 48,64",
     "TransformerDecoder called with a memory_mask or memory_is_causal (the library models the memory's key padding mask alone)"),
    # the translation tutorial without its masks named, and with them out of forward's order
    ("tests.export.custom_models:translation_tutorial --path . --tokens 64 --vocab 2000 --condition tokens:48 --source-first --sequence-first",
     "masks its training loop makes: --mask NAME=KIND for each, in forward's order (src_mask, tgt_mask, src_padding_mask, tgt_padding_mask, "
     "memory_key_padding_mask)"),
    ("tests.export.custom_models:translation_tutorial --path . --tokens 64 --vocab 2000 --condition tokens:48 --source-first --sequence-first "
     "--mask tgt_mask=causal --mask src_mask=square:source --mask src_padding_mask=padding:source --mask tgt_padding_mask=padding "
     "--mask memory_key_padding_mask=padding:source",
     "--mask tgt_mask=causal: forward's argument in that place is 'src_mask' (give the masks in forward's order)"),
    # an op the sequence-first reading does not translate (a product over the batch's dimension)
    ("tests.export.custom_models:seq_first_cumsum --path . --input 12,16 --sequence-first",
     "cumsum on a tensor whose batch is dimension 1 (sequence first)"),
    # nanoGPT called without targets takes its inference branch (lm_head on x[:, [-1], :]): the
    # slice stops it, and the message names --targets
    ("tests.export.custom_models:nanogpt --path . --tokens 64 --vocab 2000",
     "no gpubudget op for this ATen node (node slice_1, aten.slice.Tensor, module <root>); a model that takes targets"),
    # a factory that cannot build on the meta device: said, with the flag that builds it
    ("torchvision.models:regnet_y_400mf --path . --input 3,64,64",
     "the factory cannot build the model on the meta device: NotImplementedError"),
]


def unmappable_is_an_error(rc, err, out, want):
    """An op with no gpubudget counterpart stops the export (exit 2) naming the op and module, and
    writes no file."""
    ok = rc == "2" and want in err and not os.path.exists(out)
    print(f"unmappable op: exit {rc}, stderr {err!r}: {'ok' if ok else '**MISS** (expected exit 2, no file and ' + repr(want) + ')'}")
    return ok


def run_committed(gpubudget, repo):
    refs, t = reference_cases(repo), Table()
    for name, file, zoo_args, case in COMMITTED:
        path = os.path.join(repo, "tests/export/data", file)
        with open(path) as f:
            stated = json.load(f)["parameters"]
        compare(t, gpubudget, name, path, stated, zoo_args, refs.get(case) if case else None)
    for name, file, spec, zoo_args, case, known in LORA:
        compare_flags(t, gpubudget, repo, name, file, ["--lora", spec], zoo_args, case, known, refs)
    for plan in FLAGGED:
        compare_flags(t, gpubudget, repo, *plan, refs)
    t.print()
    return 1 if t.failed else 0


def main(argv):
    gpubudget, repo, mode = argv
    return run_torch26(gpubudget, repo) if mode == "torch26" else run_committed(gpubudget, repo)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
