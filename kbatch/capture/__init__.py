"""Kafka traffic out of packet captures (``kbatch pcap``): packets, TCP streams, Kafka frames.

Layers, each its own module: :mod:`kbatch.capture.packets` reads pcap and pcapng files into TCP segments
(the file formats and the link, IP and TCP headers are dpkt's, the optional extra ``.[pcap]`` of kbatch's checkout);
:mod:`kbatch.capture.streams` reassembles each connection's two directions into byte streams, with gaps;
:mod:`kbatch.capture.frames` cuts them into Kafka's size frames; :mod:`kbatch.capture.exchanges` reads request
headers and pairs responses with requests by correlation id.
"""
