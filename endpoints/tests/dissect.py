#!/usr/bin/env python3
"""An independent dissector of Horus frames, written from the public Horus header and the public
testbed's payload (horus-scheduler/horus-p4 `headers.p4`, horus-app-eval's client `Message` and
worker `struct message`; not from this project's code): reads a classic pcap file, prints one
JSON object per frame, each field as the public code reads it.

Header (after Ethernet II, IPv4 without options, UDP to port 1234), big endian as the switches
read it: pkt_type u8, cluster (pool) id u16, src_id u16, dst_id u16, qlen u16, seq_num u16.
Payload: client_id u16 big endian (the client writes it pre-swapped); req_id u32, pkts_length u32
(bytes, 165 a packet), run_ns u64, gen_ns u64 and the app data little endian (the x86 hosts'
order, as the public worker and client read them).
"""
import json
import socket
import struct
import sys


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic == 0xA1B2C3D4:
        end = "<"
    elif magic == 0xD4C3B2A1:
        end = ">"
    else:
        raise SystemExit(f"{path}: not a classic pcap file (magic {magic:#x})")
    linktype = struct.unpack(end + "I", data[20:24])[0]
    if linktype != 1:
        raise SystemExit(f"{path}: link type {linktype}, want 1 (Ethernet)")
    off = 24
    while off < len(data):
        _, _, incl, _ = struct.unpack(end + "IIII", data[off:off + 16])
        off += 16
        yield data[off:off + incl]
        off += incl


def dissect(f):
    ethertype = struct.unpack("!H", f[12:14])[0]
    assert ethertype == 0x0800, hex(ethertype)
    ip = f[14:34]
    ver_ihl, _, total_len, _, _, ttl, proto, _, src, dst = struct.unpack("!BBHHHBBH4s4s", ip)
    assert ver_ihl == 0x45 and proto == 17
    sport, dport, ulen, _ = struct.unpack("!HHHH", f[34:42])
    assert ulen == total_len - 20
    t, pool, src_id, dst_id, qlen, seq = struct.unpack("!BHHHHH", f[42:53])
    out = {
        "src": f"{socket.inet_ntoa(src)}:{sport}",
        "dst": f"{socket.inet_ntoa(dst)}:{dport}",
        "type": t & 0x7F,
        "more": bool(t & 0x80),
        "pool": pool,
        "src_id": src_id,
        "dst_id": dst_id,
        "qlen": qlen,
        "seq": seq,
    }
    payload = f[53:14 + total_len]
    code = t & 0x7F
    if code == 11 and len(payload) >= 154:
        # The worker's KEEP_ALIVE, as the public controller decodes it: the header little endian.
        _, _, ka_server, ka_leaf, ka_workers, _ = struct.unpack("<BHHHHH", f[42:53])
        ids = [struct.unpack("<Q", payload[26 + 8 * i:34 + 8 * i])[0] for i in range(min(ka_workers, 16))]
        out.update(ka_server=ka_server, ka_leaf=ka_leaf, ka_workers=ka_workers, ka_ids=ids)
        return out
    if code == 12:
        # The controller's WORKER_ID, as the public worker reads it: the first index in qlen.
        out.update(worker_id_first=qlen, length=len(payload) + 11)
        return out
    if code == 13 and len(payload) >= 154:
        # The worker's WORKER_ID_ACK: its new IDs in app_data, little endian.
        words = [struct.unpack("<Q", payload[26 + 8 * i:34 + 8 * i])[0] for i in range(16)]
        out.update(ack_ids=[w for w in words if w])
        return out
    if len(payload) >= 26:
        (client_id,) = struct.unpack(">H", payload[:2])
        req_id, pkts, run_ns, gen_ns = struct.unpack("<IIQQ", payload[2:26])
        out.update(client_id=client_id, req_id=req_id, pkts_length=pkts,
                   packets=max(pkts // 165, 1), run_ns=run_ns, gen_ns=gen_ns,
                   app_bytes=len(payload) - 26)
    return out


if __name__ == "__main__":
    for fr in frames(sys.argv[1]):
        print(json.dumps(dissect(fr)))
