#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scripts/vm/hang.py MONITOR-SOCKET KALLSYMS: where a hung guest's vCPUs are.

scripts/vm/run.sh calls it when the guest's console has been silent for
VM_HANG_S seconds (the guest prints a heartbeat every minute): it asks the
QEMU monitor for every vCPU's registers, prints each vCPU's RIP with the
kernel symbol it falls in (the guest's own text symbols, which
scripts/vm/guest.sh copies from /proc/kallsyms at boot: Debian's System.map
is a stub), and its registers, then quits QEMU. Two vCPUs that spin
with interrupts off (IF clear in RFLAGS) never reach the soft-lockup
watchdog, and TCG has no NMI watchdog: this is how such a hang is named.
"""
import bisect
import re
import socket
import sys
import time


def monitor(path, command):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(10)
    out = b""

    def until_prompt():
        nonlocal out
        out = b""
        while not out.endswith(b"(qemu) "):
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
        return out.decode(errors="replace")

    until_prompt()  # the banner
    s.sendall(command.encode() + b"\n")
    text = until_prompt()
    # The monitor echoes with terminal escapes and ends lines with CRLF.
    return s, re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text).replace("\r", "")


def symbols(path):
    addrs, names = [], []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[1] in "tTwW":
                    addrs.append(int(parts[0], 16))
                    names.append(parts[2])
    except OSError as e:
        print(f"hang.py: no symbols ({e})")
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[i] for i in order], [names[i] for i in order]


def main():
    if len(sys.argv) != 3:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    addrs, names = symbols(sys.argv[2])
    # Twice, a second apart: a vCPU that spins shows the same place (or loop).
    for round_ in (1, 2):
        s, text = monitor(sys.argv[1], "info registers -a")
        print(f"== round {round_}")
        for cpu, regs in re.findall(r"CPU#(\d+)\n(.*?)(?=\nCPU#|\Z)", text, re.S):
            rip = re.search(r"RIP=([0-9a-f]+)", regs)
            flags = re.search(r"RFL=([0-9a-f]+)", regs)
            where = "?"
            if rip:
                pc = int(rip.group(1), 16)
                i = bisect.bisect_right(addrs, pc) - 1
                if i >= 0:
                    where = f"{names[i]}+{pc - addrs[i]:#x}"
            irq = "?" if not flags else ("on" if int(flags.group(1), 16) & 0x200 else "off")
            print(f"CPU {cpu}: RIP {rip.group(1) if rip else '?'} {where}, interrupts {irq}")
        if round_ == 1:
            print(text)
            s.close()
            time.sleep(1)
    s.sendall(b"quit\n")
    s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
