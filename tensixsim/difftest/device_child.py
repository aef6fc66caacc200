"""The child process of :mod:`tensixsim.difftest.device`: one job (JSON on stdin) on one device.

It prints one JSON line: ``{"status": hex, "outputs": {name: hex}, "error": str | None}``, or
``{"fatal": why}`` when the device cannot be opened. A libttsim error ends this process instead;
the parent reports what it printed.
"""

from __future__ import annotations

import json
import sys
import time


def _open(device: str):
    import tt_umd

    if device.startswith("pcie:"):
        dev = tt_umd.TTDevice.create(int(device[5:]))
    else:
        from tensixsim.difftest.device import simulator_library

        dev = tt_umd.TTSimTTDevice.create(str(simulator_library(device)))
    dev.init_tt_device()
    return dev


def run(job: dict) -> dict:
    try:
        dev = _open(job["device"])
    except Exception as error:  # any failure to open is reported, whatever raised it
        return {"fatal": f"cannot open {job['device']}: {type(error).__name__}: {error}".splitlines()[0]}
    x, y = job["tile"]
    reset = job["soft_reset"]
    # Hold every core while the program and its inputs go in, then release the chosen ones.
    dev.noc_write32(x, y, reset, job["hold_all"])
    for address, data in job["writes"]:
        dev.noc_write(x, y, address, bytes.fromhex(data))
    dev.noc_write32(x, y, reset, job["hold_all"] & ~job["release"])
    error = None
    deadline = time.monotonic() + job["timeout_s"]
    pending = list(job["wait_for"])
    while pending:
        pending = [a for a in pending if dev.noc_read32(x, y, a) != job["magic"]]
        if pending and time.monotonic() > deadline:
            error = f"timeout after {job['timeout_s']} s: no status record at {[hex(a) for a in pending]}"
            break
    result = {
        "status": dev.noc_read(x, y, job["status_base"], job["status_size"]).hex(),
        "outputs": {name: dev.noc_read(x, y, address, size).hex() for name, address, size in job["reads"]},
        "error": error,
    }
    dev.noc_write32(x, y, reset, job["hold_all"])  # leave the tile quiet
    return result


def main() -> None:
    result = run(json.load(sys.stdin))
    sys.stdout.write("\n" + json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
