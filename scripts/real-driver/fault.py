# SPDX-License-Identifier: Apache-2.0
"""GPU faults on purpose for scripts/real-driver/faults.sh (CuPy, as installed on the test machine).

  fault.py hold GIB SECS   hold GIB of GPU memory, touched, for SECS seconds, then exit
  fault.py illegal         one kernel stores to address 0x10 (an MMU fault), then exit
  fault.py trap            one kernel executes `trap` (a compute-engine exception), then exit
  fault.py holdfault GIB SECS   hold GIB, fault with an illegal address, keep the process alive
                           SECS seconds after the fault (the memory stays held), then exit
"""
import sys
import time

import cupy as cp


def stamp(what):
    print(f"{time.time():.3f} {what}", flush=True)


def hold(gib):
    a = cp.empty(int(gib * 2**30), dtype=cp.uint8)
    a.fill(1)
    cp.cuda.Device().synchronize()
    stamp(f"holding {gib} GiB")
    return a


def fault(kind):
    if kind == "trap":
        k = cp.RawKernel(r'extern "C" __global__ void f(unsigned long long a) { asm volatile("trap;"); }', "f")
    else:
        k = cp.RawKernel(r'extern "C" __global__ void f(unsigned long long a) '
                         r'{ *(volatile int*)(a + 4 * threadIdx.x) = 1; }', "f")
    stamp(f"launch {kind}")
    try:
        k((1,), (32,), (cp.uint64(0x10),))
        cp.cuda.Device().synchronize()
        stamp("no error")
    except Exception as e:  # the CUDA error of the fault
        stamp(f"error {type(e).__name__}: {e}")


mode = sys.argv[1]
if mode == "hold":
    keep = hold(float(sys.argv[2]))
    time.sleep(float(sys.argv[3]))
elif mode in ("illegal", "trap"):
    fault(mode)
elif mode == "holdfault":
    keep = hold(float(sys.argv[2]))
    time.sleep(2)
    fault("illegal")
    time.sleep(float(sys.argv[3]))
stamp("exit")
