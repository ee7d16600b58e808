"""Kafka's bytes as Kafka declares them, and nothing that walks a file.

* :mod:`.layouts` -- the construct declarations of every log entry (v0, v1, v2, the v3 proposal): the one
  description of the layouts;
* :mod:`.structs` -- the same layouts as ``struct`` codecs and numbers, generated from the declarations;
* :mod:`.framing` -- what makes bytes a log entry (magic, size bounds, the CRC per magic);
* :mod:`.checksums` -- CRC-32 and CRC-32C;
* :mod:`.codecs` -- the compression codecs, with their bounds;
* :mod:`.findings` -- what kbatch says about bytes that are not as Kafka writes them;
* :mod:`.wire` -- the numbers a capture of Kafka's traffic is read by: a frame's size field, link, IP and TCP.
"""
