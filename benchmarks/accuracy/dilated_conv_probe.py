#!/usr/bin/python3
"""A dilated convolution's backward on oneDNN (op_rules.md 2.6 #67): the rise of `convolution_backward`
above the live bytes, against its weight W, for dilations whose kernel extent (k - 1)·d + 1 is at,
below or above the input's size, under the malloc shim (measure.py). FCN-ResNet50's layer4 (3x3
512->512, dilation 4, an 8x8 map at 64² input) is the first row.

    scripts/torch26-env run python3 benchmarks/accuracy/dilated_conv_probe.py   # PyTorch 2.6 CPU, 2 threads
"""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure
measure.ensure_shim()
import torch, torch.nn as nn
torch.set_num_threads(2)
heap = measure.Heap()
def rise(n, cin, cout, k, hw, dil, xgrad=True, stride=1):
    conv = nn.Conv2d(cin, cout, k, padding=dil * (k // 2), dilation=dil, bias=False, stride=stride)
    return measure.conv_backward_rise(heap, conv, lambda: torch.randn(n, cin, hw, hw, requires_grad=xgrad))
print("n cin cout k hw dil | X Y W | rise rise/W (rise-W-X)/W")
for n, cin, cout, k, hw, dil in [(2,512,512,3,8,4),(2,512,512,3,8,2),(2,512,512,3,8,1),(2,512,512,3,16,4),(2,512,512,3,32,4),(2,512,512,3,9,4),(2,512,512,3,7,4),(2,512,512,3,8,3),(2,256,256,3,8,4),(2,128,128,3,8,4),(1,512,512,3,8,4),(4,512,512,3,8,4),(2,256,512,3,8,4),(2,512,256,3,8,4),(2,256,256,3,16,8),(2,256,256,3,12,6),(2,64,64,3,8,4)]:
    X = n*cin*hw*hw*4; Y = n*cout*hw*hw*4; W = cin*cout*k*k*4
    r = rise(n,cin,cout,k,hw,dil)
    print(f"{n} {cin} {cout} {k} {hw} {dil} | {X} {Y} {W} | {r} {r/W:.3f} {(r-W-X)/W:.3f}", flush=True)
