#!/usr/bin/env python3
"""Frames/s of the GL samples, headless, on two OpenCL platforms in one run, split into phases.

Runs duet-nbody (16,384 bodies by default), duet-simplegl, duet-ocean and duet-gasdyn (their
default settings) with --stats on each platform, parses the per-phase table they print at exit
and prints, per sample: frames/s and per-frame
milliseconds of compute (CL kernels, from profiling events), interop (acquire + release of the
shared GL objects, wall time), render (GL work, with the CL fog pass that runs inside duet-nbody's
render hook taken out) and the whole frame, each with its share of the frame, and the ratio
first/second platform. Medians over the frames, so the first frame's lazy kernel compilation
(PoCL) does not dominate. Called by bench/samples_fps.sh, which sets up the ICD loader.
"""
import argparse
import json
import os
import re
import subprocess
import sys

PHASE_LINE = re.compile(r"^(\S.*?)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$")


def parse_stats(output):
    """Phase name -> dict(count, mean, min, median, max, total) in ms, from the --stats table."""
    phases = {}
    in_table = False
    for line in output.splitlines():
        if line.startswith("phase ") and "median ms" in line:
            in_table = True
            continue
        if not in_table:
            continue
        m = PHASE_LINE.match(line.rstrip())
        if not m:
            continue
        name, count, *values = m.groups()
        if values[0] == "-":
            continue
        keys = ("mean", "min", "median", "max", "total")
        phases[name] = dict(count=int(count), **{k: float(v) for k, v in zip(keys, values)})
    return phases


def split(phases):
    """compute / interop / render / frame per-frame medians (ms) from the parsed phases."""
    med = lambda name: phases.get(name, {}).get("median", 0.0)
    fog_kernel, fog_interop = med("fog kernel"), med("fog interop")
    return {
        "compute": med("compute") + fog_kernel,
        "interop": med("acquire/release") + fog_interop,
        "render": max(med("render") - fog_kernel - fog_interop, 0.0),
        "frame": med("frame"),
        "fog pass": fog_kernel + fog_interop,
    }


def run(binary, platform, frames, size, settings):
    cmd = [binary, "--headless", "--no-overlay", "--stats", "--frames", str(frames),
           "--size", size, "--platform", platform]
    for s in settings:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        return None, out
    return parse_stats(out), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    ap.add_argument("--platforms", nargs=2, default=["Duet", "Portable Computing Language"],
                    metavar=("FIRST", "SECOND"), help="platform name substrings")
    ap.add_argument("--bodies", type=int, default=16384)
    ap.add_argument("--frames", type=int, default=10)
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--quick", action="store_true", help="4,096 bodies, 5 frames, 640x360")
    ap.add_argument("--samples", default="nbody,simplegl,ocean,gasdyn")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    if args.quick:
        args.bodies, args.frames, args.size = 4096, 5, "640x360"

    samples = {
        "nbody": ("samples/nbody/duet-nbody", [f"N={args.bodies}", "fog=0"]),
        "nbody (depth fog)": ("samples/nbody/duet-nbody", [f"N={args.bodies}", "fog=1"]),
        "simplegl": ("samples/simplegl/duet-simplegl", []),
        "ocean": ("samples/ocean/duet-ocean", []),
        "gasdyn": ("samples/gasdyn/duet-gasdyn", []),
    }
    wanted = [s.strip() for s in args.samples.split(",")]
    chosen = [k for k in samples if k.split(" ")[0] in wanted]
    results = {}
    failed = False
    print(f"samples_fps: {args.frames} frames at {args.size}, headless; N-body "
          f"{args.bodies} bodies; medians per frame")
    for name in chosen:
        rel, settings = samples[name]
        binary = os.path.join(args.build, rel)
        results[name] = {}
        for platform in args.platforms:
            print(f"  running {name} on {platform} ...", file=sys.stderr, flush=True)
            phases, out = run(binary, platform, args.frames, args.size, settings)
            if phases is None or "frame" not in phases:
                print(f"  {name} on {platform}: FAIL\n" + "\n".join(
                    "    " + l for l in out.strip().splitlines()[-6:]), file=sys.stderr)
                failed = True
                continue
            for line in out.splitlines():  # what each run could not do, e.g. fog off on PoCL
                if "depth fog off" in line or "using host copies" in line:
                    print(f"  note ({platform}): {line.strip()}", file=sys.stderr)
            results[name][platform] = split(phases)

    first, second = args.platforms
    for name, by_platform in results.items():
        print(f"\n{name}")
        header = f"  {'phase':<10}"
        for p in args.platforms:
            header += f" {p[:18]:>18} {'share':>6}"
        header += f" {'ratio':>7}"
        print(header)
        for key in ("compute", "interop", "render", "frame", "fog pass"):
            if key == "fog pass" and not any(r.get(key) for r in by_platform.values()):
                continue
            line = f"  {key + ('*' if key == 'fog pass' else ''):<10}"
            for p in args.platforms:
                r = by_platform.get(p)
                if r is None:
                    line += f" {'FAIL':>18} {'':>6}"
                    continue
                share = 100.0 * r[key] / r["frame"] if r["frame"] else 0.0
                line += f" {r[key]:>15.2f} ms {share:>5.1f}%"
            a, b = by_platform.get(first, {}).get(key), by_platform.get(second, {}).get(key)
            line += f" {a / b:>7.2f}" if a and b else f" {'-':>7}"
            print(line)
        line = f"  {'frames/s':<10}"
        for p in args.platforms:
            r = by_platform.get(p)
            fps = 1000.0 / r["frame"] if r and r["frame"] else 0.0
            line += f" {fps:>18.2f} {'':>6}" if r else f" {'FAIL':>18} {'':>6}"
        a, b = by_platform.get(first, {}).get("frame"), by_platform.get(second, {}).get("frame")
        line += f" {b / a:>7.2f}" if a and b else f" {'-':>7}"
        print(line)
    print("\nratio: first/second for times, first's frames/s over second's for frames/s. "
          "render is GL work only: duet-nbody's CL fog pass (*: kernel + acquire/release of its\n"
          "textures, run inside the render hook) is counted in compute and interop, and shown "
          "apart. PoCL cannot run the fog pass (no CL_DEPTH/CL_sRGBA images), so 'nbody' is the "
          "like-for-like row.")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"frames": args.frames, "size": args.size, "bodies": args.bodies,
                       "platforms": args.platforms, "results": results}, f, indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
