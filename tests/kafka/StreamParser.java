// Kafka's own reading of captured Kafka traffic, for tests/test_real_kafka_pcap.py: run as a single source file
// (java -cp JARS StreamParser.java REQUESTS RESPONSES [REQUESTS RESPONSES ...]) with the kafka-clients jar of
// tests/kafka/pom.xml. Each pair is one TCP connection's two reassembled directions, client to broker and broker
// to client, as kbatch.capture.streams.write_streams wrote them.
//
// Nothing of kbatch's is used: the frames are cut as NetworkReceive.readFrom cuts them (an int32 size, then the
// frame), every request is read by RequestHeader.parse and AbstractRequest.parseRequest, every response by
// AbstractResponse.parseResponse(ByteBuffer, RequestHeader) -- ResponseHeader.parse at the header version
// ApiKeys.responseHeaderVersion gives, then the body at the request's version, as NetworkClient.parseResponse
// does -- paired with its request by correlation id. The records of Produce requests and of Fetch and ShareFetch
// responses are walked by MemoryRecords.batches() (ByteBufferLogInputStream, which stops before a batch cut
// short by a fetch's size limit).
//
// Output, one JSON object a line:
//   {"type": "batch", "stream": FILE, "api_key", "api_version", "correlation_id", "topic", "topic_id",
//    "partition", "magic", "base_offset", "last_offset", "count", "crc", "crc_valid"}   -- RecordBatch's
//    baseOffset(), lastOffset(), countOrNull() (a v0/v1 entry: its records, counted), checksum(), isValid()
//   {"type": "cut", "stream": FILE, "api_key", "api_version", "correlation_id", "topic", "topic_id", "partition",
//    "bytes"}     -- a partition's Records whose last bytes are no whole batch (MemoryRecords.validBytes() short)
//   {"type": "message", "stream": FILE, "kind": "request"|"response", "api_key", "api_version", "count"}
//   {"type": "error", "stream": FILE, "pos": P, "what": MESSAGE}   -- what Kafka's classes refused
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ShareFetchResponse;

public class StreamParser {
    // (kind, api key, api version) -> how many were read
    static final Map<String, Integer> counts = new TreeMap<>();
    // topic id -> its name, as Metadata responses gave it
    static final Map<String, String> topicNames = new TreeMap<>();

    public static void main(String[] args) throws IOException {
        for (int i = 0; i + 1 < args.length; i += 2) {
            Map<Integer, RequestHeader> requests = new HashMap<>();   // correlation id -> the request's header
            readRequests(args[i], requests);
            readResponses(args[i + 1], requests);
        }
        for (Map.Entry<String, String> entry : topicNames.entrySet()) {
            System.out.println("{\"type\": \"topic\", \"topic_id\": " + text(entry.getKey()) + ", \"topic\": "
                    + text(entry.getValue()) + "}");
        }
        for (Map.Entry<String, Integer> entry : counts.entrySet()) {
            String[] key = entry.getKey().split(" ");
            System.out.println("{\"type\": \"message\", \"kind\": \"" + key[0] + "\", \"api_key\": " + key[1]
                    + ", \"api_version\": " + key[2] + ", \"count\": " + entry.getValue() + "}");
        }
    }

    // NetworkReceive.readFrom: a 4-byte size, then that many bytes. A frame the file ends inside is left out
    // (kbatch reports it; the capture simply stopped there).
    static Iterator<ByteBuffer> frames(String path) throws IOException {
        ByteBuffer stream = ByteBuffer.wrap(Files.readAllBytes(Path.of(path)));
        return new Iterator<>() {
            public boolean hasNext() {
                return stream.remaining() >= 4 && stream.getInt(stream.position()) >= 0
                        && stream.remaining() - 4 >= stream.getInt(stream.position());
            }

            public ByteBuffer next() {
                int size = stream.getInt();
                ByteBuffer frame = stream.slice(stream.position(), size);
                stream.position(stream.position() + size);
                return frame;
            }
        };
    }

    static void count(String kind, ApiKeys api, short version) {
        counts.merge(kind + " " + api.id + " " + version, 1, Integer::sum);
    }

    static void readRequests(String path, Map<Integer, RequestHeader> requests) throws IOException {
        int pos = 0;
        for (Iterator<ByteBuffer> it = frames(path); it.hasNext(); ) {
            ByteBuffer frame = it.next();
            int framePos = pos;
            pos += 4 + frame.remaining();
            try {
                RequestHeader header = RequestHeader.parse(frame);   // leaves the buffer at the body
                AbstractRequest request = AbstractRequest.parseRequest(header.apiKey(), header.apiVersion(),
                        new ByteBufferAccessor(frame)).request;
                requests.put(header.correlationId(), header);
                count("request", header.apiKey(), header.apiVersion());
                if (request instanceof ProduceRequest) {
                    for (ProduceRequestData.TopicProduceData topic : ((ProduceRequest) request).data().topicData()) {
                        for (ProduceRequestData.PartitionProduceData partition : topic.partitionData()) {
                            batches(path, header, topic.name(), topic.topicId(), partition.index(), partition.records());
                        }
                    }
                }
            } catch (RuntimeException error) {
                error(path, framePos, error);
            }
        }
    }

    static void readResponses(String path, Map<Integer, RequestHeader> requests) throws IOException {
        int pos = 0;
        for (Iterator<ByteBuffer> it = frames(path); it.hasNext(); ) {
            ByteBuffer frame = it.next();
            int framePos = pos;
            pos += 4 + frame.remaining();
            RequestHeader header = requests.remove(frame.getInt(0));   // (ResponseHeader's CorrelationId)
            if (header == null) {
                error(path, framePos, new IllegalStateException("no request has correlation id " + frame.getInt(0)));
                continue;
            }
            try {
                AbstractResponse response = AbstractResponse.parseResponse(frame, header);
                count("response", header.apiKey(), header.apiVersion());
                if (response instanceof FetchResponse) {
                    for (FetchResponseData.FetchableTopicResponse topic : ((FetchResponse) response).data().responses()) {
                        for (FetchResponseData.PartitionData partition : topic.partitions()) {
                            batches(path, header, topic.topic(), topic.topicId(), partition.partitionIndex(),
                                    partition.records());
                        }
                    }
                } else if (response instanceof MetadataResponse) {
                    for (MetadataResponseData.MetadataResponseTopic topic : ((MetadataResponse) response).data().topics()) {
                        if (topic.name() != null && !Uuid.ZERO_UUID.equals(topic.topicId())) {
                            topicNames.put(topic.topicId().toString(), topic.name());
                        }
                    }
                } else if (response instanceof ShareFetchResponse) {
                    for (ShareFetchResponseData.ShareFetchableTopicResponse topic
                            : ((ShareFetchResponse) response).data().responses()) {
                        for (ShareFetchResponseData.PartitionData partition : topic.partitions()) {
                            batches(path, header, null, topic.topicId(), partition.partitionIndex(), partition.records());
                        }
                    }
                }
            } catch (RuntimeException error) {
                error(path, framePos, error);
            }
        }
    }

    static void batches(String path, RequestHeader header, String topic, Uuid topicId, int partition,
                        BaseRecords records) {
        if (records == null || records.sizeInBytes() == 0) {
            return;
        }
        MemoryRecords memory = (MemoryRecords) records;   // what ByteBufferAccessor.readRecords gives
        String where = "\"stream\": " + text(path) + ", \"api_key\": " + header.apiKey().id + ", \"api_version\": "
                + header.apiVersion() + ", \"correlation_id\": " + header.correlationId() + ", \"topic\": " + text(topic)
                // a version without topic ids leaves TopicId at Uuid.ZERO_UUID
                + ", \"topic_id\": " + (topicId == null || topicId.equals(Uuid.ZERO_UUID) ? "null" : text(topicId.toString()))
                + ", \"partition\": " + partition;
        for (RecordBatch batch : memory.batches()) {
            Integer count = batch.countOrNull();
            if (count == null) {   // a v0/v1 entry: a message, or a wrapper of compressed messages
                count = 0;
                for (Iterator<?> each = batch.iterator(); each.hasNext(); each.next()) {
                    count++;
                }
            }
            System.out.println("{\"type\": \"batch\", " + where + ", \"magic\": " + batch.magic() + ", \"base_offset\": "
                    + batch.baseOffset() + ", \"last_offset\": " + batch.lastOffset() + ", \"count\": " + count
                    + ", \"crc\": " + batch.checksum() + ", \"crc_valid\": " + batch.isValid() + "}");
        }
        if (memory.validBytes() < memory.sizeInBytes()) {
            System.out.println("{\"type\": \"cut\", " + where + ", \"bytes\": "
                    + (memory.sizeInBytes() - memory.validBytes()) + "}");
        }
    }

    static void error(String path, int pos, Exception error) {
        System.out.println("{\"type\": \"error\", \"stream\": " + text(path) + ", \"pos\": " + pos + ", \"what\": "
                + text(error.toString()) + "}");
    }

    // A JSON string: topic names and error messages come from captured bytes.
    static String text(String value) {
        if (value == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder("\"");
        for (char c : value.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
