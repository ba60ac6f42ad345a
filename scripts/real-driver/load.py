# SPDX-License-Identifier: Apache-2.0
"""GPU loads for scripts/real-driver/run.sh (PyTorch, as installed on the test machine).

  load.py hold GIB SECONDS    allocate GIB GiB, touch it once, then sleep: idle-held
  load.py busy SECONDS        back-to-back 8192^3 bf16 matrix products: active, every SM busy
  load.py light SECONDS       one thread block spinning in a loop of 100 ms kernels: the driver's
                              utilization reads ~100 % while one SM of 132 works
"""
import sys
import time

mode, args = sys.argv[1], sys.argv[2:]
if mode == "hold":
    import torch
    gib, seconds = float(args[0]), float(args[1])
    block = torch.empty(int(gib * (1 << 30)), dtype=torch.uint8, device="cuda")
    block.fill_(1)
    torch.cuda.synchronize()
    print(f"hold: {gib} GiB held", flush=True)
    time.sleep(seconds)
elif mode == "busy":
    import torch
    seconds = float(args[0])
    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    end = time.time() + seconds
    n = 0
    while time.time() < end:
        for _ in range(20):
            a @ b
        torch.cuda.synchronize()
        n += 20
    print(f"busy: {n} products", flush=True)
elif mode == "light":
    import torch
    seconds = float(args[0])
    end = time.time() + seconds
    n = 0
    while time.time() < end:
        torch.cuda._sleep(180_000_000)  # one thread spinning ~100 ms at 1.8 GHz
        torch.cuda.synchronize()
        n += 1
    print(f"light: {n} kernels", flush=True)
