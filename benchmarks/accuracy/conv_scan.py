#!/usr/bin/python3
"""Conv2d (oneDNN) transient scan behind op_rules.md section 1b: forward transient and backward
extra (beyond grad_x and grad_W) for a set of layer shapes. Usage: /usr/bin/python3 conv_scan.py"""
import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure; measure.ensure_shim()
import torch, torch.nn as nn, gc, os
torch.set_num_threads(int(os.environ.get('GB_THREADS', '2')))
h=measure.Heap(); K=1024
def run(cin,cout,k,s,p,B,H,groups=1,xg=True,bias=True):
    m=nn.Conv2d(cin,cout,k,stride=s,padding=p,groups=groups,bias=bias); x=torch.randn(B,cin,H,H,requires_grad=xg)
    gc.collect(); b=h.current(); h.reset_peak()
    y=m(x); fp=h.peak()-b; af=h.current()-b
    g=torch.ones_like(y); l=h.current(); h.reset_peak(); y.backward(g); bp=h.peak()-l; ba=h.current()-l
    W=m.weight.numel()*4; X=x.numel()*4; Y=y.numel()*4
    gx = X if xg else 0
    print(f"{cin:>4}->{cout:<4} k{k} s{s} g{groups:<3} B{B} H{H:<3} xg={xg:d}: X={X/K:7.0f}K W={W/K:6.0f}K Y={Y/K:7.0f}K | fwd_trans={(fp-af)/K:7.1f}K ({(fp-af)/Y:.2f}Y) bwd_extra_over_grads={(bp-gx-W)/K:8.1f}K ({(bp-gx-W)/X:.2f}X {(bp-gx-W)/Y:.2f}Y {(bp-gx-W)/W:.2f}W)")
for a in [(3,64,7,2,3,2,224,1,False),(64,64,3,1,1,2,56),(64,128,3,2,1,2,56),(64,128,1,2,0,2,56),(128,128,3,1,1,2,28),(256,256,3,1,1,2,14),(512,512,3,1,1,2,7),
          (3,96,4,4,0,2,224,1,False),(96,96,7,1,3,2,56,96),(384,384,7,1,3,2,14,384),(768,768,7,1,3,2,7,768),
          (3,64,3,1,1,10,96,1,False),(64,128,3,1,1,10,48),(128,256,3,1,1,10,24),
          (64,64,3,1,1,1,64),(64,192,1,1,0,1,64,1,True,False),(192,192,7,1,3,1,64,192,True,False),(64,10,1,1,0,1,64)]:
    run(*a)
# non-overlapping patchify convs (kernel == stride)
for a in [(384,768,2,2,0,2,14),(192,384,2,2,0,2,28),(96,192,2,2,0,2,56),(3,768,16,16,0,2,224,1,False),(3,96,4,4,0,2,224,1,False)]:
    run(*a)
# depthwise 7x7 whose input is channels_last-strided (ConvNeXt: the block output after permute + add)
def run_cl(C, H, k=7, B=2):
    m = nn.Conv2d(C, C, k, padding=k // 2, groups=C); x0 = torch.randn(B, H, H, C, requires_grad=True)
    gc.collect(); b = h.current(); h.reset_peak()
    y = m(x0.permute(0, 3, 1, 2)); fp = h.peak() - b; af = h.current() - b
    g = torch.ones_like(y); l = h.current(); h.reset_peak(); y.backward(g); bp = h.peak() - l
    W = m.weight.numel() * 4; X = x0.numel() * 4
    print(f"dw{k} C={C} H={H} channels_last-strided input: X={X/K:.0f}K W={W/K:.0f}K fwd_trans={(fp-af)/K:.1f}K bwd_extra_over_grads={(bp-X-W)/K:.1f}K = {(bp-X-W)/W:.1f}W")
for C, H in [(96, 56), (192, 28), (384, 14), (768, 7)]:
    run_cl(C, H)
