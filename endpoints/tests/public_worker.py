#!/usr/bin/env python3
"""A stand-in of the public Horus testbed's worker (horus-scheduler/horus-app-eval,
`server_code/shinjuku-rocksdb`), written from its definitions (not from this project's code), on
the emulated network of this project's tests: every datagram is one Ethernet frame, except the
controller's messages, which come bare (a Horus header and what follows it).

What it does, as the public worker does:
- a KEEP_ALIVE per server every PERIOD seconds: a 165-byte message, header fields in host order
  (little endian): src_id the server's ID, dst_id its leaf, qlen its worker count; client_id the
  first worker ID; req_id a counter; app_data[i] the worker IDs (little endian u64);
- WORKER_ID (type 12) from the controller: the first worker's index in qlen (big endian), worker
  IDs from it plus 1; answered with WORKER_ID_ACK (type 13, the new IDs in app_data);
- any other Horus packet is a task for the worker whose ID is dst_id (big endian) + 1: it runs
  run_ns (little endian, nanoseconds: the public worker's synthetic loop) in FCFS order and
  answers TASK_DONE, or TASK_DONE_IDLE when its queue ran dry after a task with qlen 1; the answer
  copies the task's cluster, client_id, req_id, run_ns and gen_ns bytes, src_id = the task's
  dst_id bytes, dst_id = the task's client_id bytes, qlen the tasks still waiting (big endian);
  IP to the task's source, UDP ports swapped.

Usage: public_worker.py MY_IP LEAF_IP SERVER LEAF FIRST_ID WORKERS PERIOD SECONDS
Prints one JSON line when it stops: what it saw and did.
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


def mac_of(ip):
    return bytes([2, 0]) + socket.inet_aton(ip)


def frame(src_ip, dst_ip, msg):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(msg), 0, 0, 64, 17, 0,
                     socket.inet_aton(src_ip), socket.inet_aton(dst_ip))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    udp = struct.pack("!HHHH", 1234, 1234, 8 + len(msg), 0)
    eth = mac_of(dst_ip) + mac_of(src_ip) + b"\x08\x00"
    return eth + ip + udp + msg


def main():
    me, leaf, server, leaf_id, first, workers, period, seconds = sys.argv[1:9]
    server, leaf_id, first, workers = int(server), int(leaf_id), int(first), int(workers)
    period, seconds = float(period), float(seconds)
    ids = [first + i for i in range(workers)]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((me, 1234))
    s.settimeout(0.01)
    seen = {"keep_alives": 0, "worker_ids": [], "tasks": 0, "done_idle": 0, "other": 0}
    queues = {i: [] for i in range(workers)}
    state = [0] * workers
    end = time.time() + seconds
    next_ka = 0.0
    count = 0
    while time.time() < end:
        now = time.time()
        if now >= next_ka:
            hdr = struct.pack("<BHHHHH", 11, 0, server, leaf_id, workers, 0)
            body = struct.pack("<HIIQQ", ids[0], count, 0, 0, 0)
            body += b"".join(struct.pack("<Q", i) for i in ids) + bytes(8 * (16 - workers))
            s.sendto(frame(me, leaf, hdr + body), (leaf, 1234))
            seen["keep_alives"] += 1
            count += 1
            next_ka = now + period
        # Run one queued task per worker (in turn), answering it.
        for w in range(workers):
            if queues[w]:
                run(s, me, leaf, queues, state, w, seen)
        try:
            d, _ = s.recvfrom(4096)
        except socket.timeout:
            continue
        if len(d) < 60:
            # The controller's bare message.
            t, _, _, _, qlen, _ = struct.unpack("!BHHHHH", d[:11])
            if t == 12:
                ids = [qlen + 1 + i for i in range(workers)]
                seen["worker_ids"].append(qlen)
                hdr = struct.pack("!BHHHHH", 13, 0, 0, 0, 0, 0)
                body = bytes(26) + b"".join(struct.pack("<Q", i) for i in ids)
                body += bytes(8 * (16 - workers))
                s.sendto(frame(me, leaf, hdr + body), (leaf, 1234))
            else:
                seen["other"] += 1
            continue
        src_ip = socket.inet_ntoa(d[26:30])
        msg = d[42:42 + MSG]
        t = msg[0]
        if t == 12 or len(msg) < MSG:
            seen["other"] += 1
            continue
        dst_id, qlen = struct.unpack("!HH", msg[5:9])
        if dst_id + 1 not in ids:
            seen["other"] += 1
            continue
        w = ids.index(dst_id + 1)
        if qlen == 1 and state[w] == 0:
            state[w] = 1
        queues[w].append((src_ip, msg))
    print(json.dumps(seen))


def run(s, me, leaf, queues, state, w, seen):
    src_ip, msg = queues[w].pop(0)
    (run_ns,) = struct.unpack("<Q", msg[21:29])
    time.sleep(run_ns / 1e9)
    left = len(queues[w])
    t = 2
    if left == 0 and state[w] > 0:
        t = 3
        state[w] -= 1
        seen["done_idle"] += 1
    reply = bytearray(MSG)
    reply[0] = t
    reply[1:3] = msg[1:3]  # cluster
    reply[3:5] = msg[5:7]  # src_id: the task's dst_id
    reply[5:7] = msg[11:13]  # dst_id: the client's ID
    reply[7:9] = struct.pack("!H", left)
    reply[11:37] = msg[11:37]  # client_id, req_id, pkts_length, run_ns, gen_ns
    s.sendto(frame(me, src_ip, bytes(reply)), (leaf, 1234))
    seen["tasks"] += 1


if __name__ == "__main__":
    main()
