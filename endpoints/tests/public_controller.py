#!/usr/bin/env python3
"""A stand-in of the public Horus controller's side of registration (horus-scheduler/
horus_controller: `core/net/horus_pkt.go` `DecodeFromBytes`, `ctrl_mgr/leafBus.go`), written from
its definitions (not from this project's code), on the emulated network of this project's tests:
it stands where the leaf's CPU port is, takes the frames a worker sends its leaf, reads each
KEEP_ALIVE as the public controller does (the header's fields little endian, at least 12 bytes;
the payload from byte 12), and after the first one sends the worker the public WORKER_ID (type
12; the leaf's index in the pool and src_id, the first worker's index in dst_id and qlen, big
endian; padded to 50 bytes, bare, as the controller's messages come on this network). It reads
the worker's WORKER_ID_ACK as the public worker writes it (the new worker IDs in app_data, little
endian u64).

Usage: public_controller.py MY_IP LEAF_INDEX FIRST SECONDS
Prints one JSON line when it stops.
"""
import json
import socket
import struct
import sys
import time


def main():
    me, leaf_index, first, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((me, 1234))
    s.settimeout(0.05)
    seen = {"keep_alives": [], "acks": [], "worker_ids_sent": 0, "other": 0}
    end = time.time() + seconds
    while time.time() < end:
        try:
            d, _ = s.recvfrom(4096)
        except socket.timeout:
            continue
        if len(d) < 42 + 12 or struct.unpack("!H", d[12:14])[0] != 0x0800:
            seen["other"] += 1
            continue
        src_ip = socket.inet_ntoa(d[26:30])
        sport = struct.unpack("!H", d[34:36])[0]
        msg = d[42:]
        t = msg[0]
        if t == 11:
            # DecodeFromBytes: little endian, the payload from byte 12.
            _, _, src_id, dst_id, qlen, _ = struct.unpack("<BHHHHH", msg[:11])
            first_id = struct.unpack("<H", msg[11:13])[0]
            ids = [struct.unpack("<Q", msg[37 + 8 * i:45 + 8 * i])[0] for i in range(min(qlen, 16))]
            seen["keep_alives"].append({"server": src_id, "leaf": dst_id, "workers": qlen,
                                        "first_id": first_id, "ids": ids, "len": len(msg)})
            if seen["worker_ids_sent"] == 0:
                wid = struct.pack("!BHHHHH", 12, leaf_index, leaf_index, first, first, 0)
                s.sendto(wid + bytes(50 - 11), (src_ip, sport))
                seen["worker_ids_sent"] += 1
        elif t == 13:
            seen["acks"].append(struct.unpack("<Q", msg[37:45])[0])
        else:
            seen["other"] += 1
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
