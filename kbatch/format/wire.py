"""The numbers a capture of Kafka's traffic is read by, below the messages: a frame's size field and its
bounds, and the link, IP and TCP fields that carry it.  Here, on the ground floor, so that the packet readers
of kbatch.capture and the compiled loop over a capture's common case (kbatch.kernels.plaincapture) take them
from one place.
"""

# Kafka's framing: a 4-byte size, then that many bytes (NetworkReceive.readFrom in
# clients/src/main/java/org/apache/kafka/common/network/NetworkReceive.java).  A size below the smallest header
# (a response's correlation id) or above the broker's default socket.request.max.bytes (100 MiB,
# SocketServerConfigs) is absurd.
SIZE_BYTES = 4
SMALLEST_FRAME = 4
LARGEST_FRAME = 100 * 1024 * 1024

# Link, IP and TCP (https://www.tcpdump.org/linktypes.html, RFC 791, RFC 8200, RFC 9293)
ETH_TYPE_IP, ETH_TYPE_IP6 = 0x0800, 0x86DD
IP_PROTO_TCP = 6
IP_OFFMASK = 0x1FFF       # an IPv4 fragment's offset
TH_SYN, TH_ACK = 0x02, 0x10
SEQ_MODULUS = 1 << 32     # TCP's sequence numbers wrap
