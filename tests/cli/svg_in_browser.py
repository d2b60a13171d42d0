#!/usr/bin/env python3
"""Renders a `gpubudget --svg` picture in headless Chromium and checks the pixels.

    svg_in_browser.py --svg FILE.svg --png OUT.png [--chromium PATH]

Passes when the screenshot shows a drawn picture (many non-white pixels, the stacked areas'
colours) and the capacity line: a row of the line's red across most of the plot. Exit 77
(CTest SKIP_RETURN_CODE) only when no Chromium is installed (scripts/install-deps installs
Debian's `chromium`); a blank or broken picture fails. Python's standard library only: the PNG
is decoded with zlib and struct.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

WIDTH, HEIGHT = 1000, 580         # the picture's size (include/gpubudget/svg/plot.hpp, svg_frame)
PLOT_LEFT, PLOT_RIGHT = 84, 970   # the plot area inside it
PLOT_TOP, PLOT_BOTTOM = 92, 520
CAPACITY_RED = (255, 0, 0)        # capacity_colour
AREA_COLOURS = {"parameters": (0x4e, 0x79, 0xa7), "saved activations": (0xb0, 0x7a, 0xa1)}
SKIP = 77


def decode_png(data):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
    channels = 3 if colour == 2 else 4
    return width, height, unfilter(zlib.decompress(idat), width, height, channels)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def unfilter(raw, width, height, channels):
    """The PNG scanline filters undone (PNG spec, section 9); each row as (r, g, b) tuples."""
    stride, rows, previous, pos = width * channels, [], bytearray(width * channels), 0
    for _ in range(height):
        kind, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, up_left = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + paeth(left, up, up_left)) & 0xFF
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, channels)])
        previous = line
    return rows


def near(pixel, colour, tolerance=24):
    return all(abs(p - c) <= tolerance for p, c in zip(pixel, colour))


def check_picture(rows):
    """The failures found in the screenshot (an empty list: it passes)."""
    failures = []
    pixels = [p for row in rows for p in row]
    drawn = sum(1 for p in pixels if min(p) < 235)
    if drawn < 0.02 * len(pixels):
        failures.append(f"picture nearly blank: {drawn} of {len(pixels)} pixels are not white")
    plot_pixels = [p for row in rows[PLOT_TOP:PLOT_BOTTOM] for p in row[PLOT_LEFT:PLOT_RIGHT]]  # not the legend's swatches
    for name, colour in AREA_COLOURS.items():
        count = sum(1 for p in plot_pixels if near(p, colour))
        if count < 200:
            failures.append(f"the {name} area is missing: {count} pixels of {colour}")
    plot = range(PLOT_LEFT + 2, min(PLOT_RIGHT, len(rows[0])) - 2)
    best = max(sum(1 for x in plot if near(row[x], CAPACITY_RED, 40)) for row in rows)
    if best < 0.9 * len(plot):
        failures.append(f"no capacity line: the reddest row has {best} of {len(plot)} red pixels across the plot")
    return failures


def find_chromium(given):
    for name in [given] if given else ["chromium", "chromium-browser", "google-chrome"]:
        path = shutil.which(name) if name else None
        if path:
            return path
    return None


def render(chromium, svg, png):
    with tempfile.TemporaryDirectory() as profile:  # a profile of its own: tests may run at once
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={profile}",
               f"--screenshot={png}", f"--window-size={WIDTH},{HEIGHT}", "file://" + os.path.abspath(svg)]
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    if not os.path.exists(png):
        raise RuntimeError(f"chromium wrote no screenshot (exit {done.returncode}):\n{done.stdout.decode(errors='replace')[-2000:]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--svg", required=True)
    ap.add_argument("--png", required=True)
    ap.add_argument("--chromium", default="")
    args = ap.parse_args()
    chromium = find_chromium(args.chromium)
    if not chromium:
        print("SKIP: no chromium (scripts/install-deps installs Debian's chromium)")
        return SKIP
    if os.path.exists(args.png):
        os.remove(args.png)
    render(chromium, args.svg, args.png)
    with open(args.png, "rb") as f:
        width, height, rows = decode_png(f.read())
    print(f"{args.svg}: rendered by {chromium} to {width}x{height}")
    failures = check_picture(rows)
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
