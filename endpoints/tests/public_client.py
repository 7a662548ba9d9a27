#!/usr/bin/env python3
"""A stand-in of the public Horus testbed's client (horus-scheduler/horus-app-eval,
`client_code/client/dpdk_client.c` `generate_packet` and `process_packet`, the `Message` of
`util.h`), written from its definitions (not from this project's code), on the emulated network
of this project's tests (every datagram one Ethernet frame, sent to its first hop).

Each task is one NEW_TASK packet of 165 bytes after UDP port 1234: the header big endian
(cluster POOL, src_id 0, dst_id 100, qlen 0, seq_num = req_id & 0xffff), then client_id big
endian, req_id, pkts_length (165: one packet, in bytes), run_ns and gen_ns (CLOCK_REALTIME at the
planned send time) little endian, 128 bytes of app_data. Tasks leave at a fixed rate. Every frame
that comes back is taken as an answer, as the public client takes it: the response time is the
wall clock minus gen_ns read little endian at byte 29 of the message, which must lie in the past
(the public client asserts it).

Usage: public_client.py MY_IP FIRST_HOP_IP POOL CLIENT_ID TASKS RATE RUN_NS DRAIN_S
Prints one JSON line: sent, answers, answers whose gen_ns was not in the past, median and maximum
response time in microseconds, the request IDs answered more than once or never.
"""
import json
import socket
import struct
import sys
import time

MSG = 165


def checksum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(src_ip, dst_ip, msg):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(msg), 0, 0, 64, 17, 0,
                     socket.inet_aton(src_ip), socket.inet_aton(dst_ip))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    udp = struct.pack("!HHHH", 1234, 1234, 8 + len(msg), 0)
    eth = bytes([2, 0]) + socket.inet_aton(dst_ip) + bytes([2, 0]) + socket.inet_aton(src_ip) + b"\x08\x00"
    return eth + ip + udp + msg


def main():
    me, hop = sys.argv[1], sys.argv[2]
    pool, client_id, tasks = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    rate, run_ns, drain = float(sys.argv[6]), int(sys.argv[7]), float(sys.argv[8])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((me, 1234))
    s.setblocking(False)
    answers, future, times, seen = 0, 0, [], {}
    start = time.time()

    def take():
        nonlocal answers, future
        while True:
            try:
                d = s.recv(4096)
            except BlockingIOError:
                return
            msg = d[42:]
            if len(msg) < 37:
                continue
            answers += 1
            (gen_ns,) = struct.unpack("<Q", msg[29:37])
            (req_id,) = struct.unpack("<I", msg[13:17])
            seen[req_id] = seen.get(req_id, 0) + 1
            now = time.time_ns()
            if gen_ns >= now:
                future += 1
            else:
                times.append((now - gen_ns) / 1e3)

    for req_id in range(tasks):
        due = start + req_id / rate
        while time.time() < due:
            take()
        gen_ns = time.time_ns()
        hdr = struct.pack("!BHHHHH", 0, pool, 0, 100, 0, req_id & 0xFFFF)
        body = struct.pack("!H", client_id) + struct.pack("<IIQQ", req_id, MSG, run_ns, gen_ns)
        body += bytes(128)
        s.sendto(frame(me, hop, hdr + body), (hop, 1234))
    end = time.time() + drain
    while time.time() < end and answers < tasks:
        take()
        time.sleep(0.001)
    times.sort()
    print(json.dumps({
        "sent": tasks,
        "answers": answers,
        "future": future,
        "p50_us": times[len(times) // 2] if times else None,
        "max_us": times[-1] if times else None,
        "twice": sorted(r for r, n in seen.items() if n > 1),
        "missing": sorted(r for r in range(tasks) if r not in seen),
    }))


if __name__ == "__main__":
    main()
