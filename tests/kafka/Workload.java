// What the real_kafka tests have the broker write: run as a single source file (java -cp JARS Workload.java
// BOOTSTRAP), with the Java clients of the same Kafka release as the broker.
//
// Each step makes Kafka itself write a kind of bytes kbatch reads: every codec, idempotent and transactional
// producers (committed, aborted and a still-open transaction, so markers, .txnindex and producer snapshots
// are the broker's own), rolled segments (so indexes are trimmed on roll), a compacted topic with
// tombstones (the cleaner's gaps and cleaner-offset-checkpoint), consumer groups of the classic and the
// KIP-848 protocol, a share group and a KIP-1071 streams group committing (so __consumer_offsets and
// __share_group_state are written by the real coordinators), and __transaction_state; a compacted topic of
// transactions with an abort the cleaner removes the records of (keeping the marker), DeleteRecords inside a
// batch (log-start-offset-checkpoint), and a deleted topic whose -delete directory waits to be removed; after an
// incident: a transactional producer restarted under the same transactional.id (its epoch bumped, its open
// transaction aborted), an idempotent producer whose connections are cut so it retries (through a proxy on
// loopback), and a transaction left open on a compacted topic (the cleaner stops at it).
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;

public class Workload {
    static String bootstrap;
    static String proxiedListener;   // the broker's PROXIED listener, host:port
    static int proxyPort;            // where the proxy listens, the port that listener advertises

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        proxiedListener = args[1];
        proxyPort = Integer.parseInt(args[2]);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            List<NewTopic> topics = new ArrayList<>();
            for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) {
                topics.add(new NewTopic("codec-" + codec, 1, (short) 1));
            }
            topics.add(new NewTopic("txn", 1, (short) 1));
            topics.add(new NewTopic("idle", 1, (short) 1));
            topics.add(new NewTopic("rolled", 1, (short) 1).configs(Map.of(
                "internal.segment.bytes", "16384", "segment.index.bytes", "4096", "index.interval.bytes", "512")));
            topics.add(new NewTopic("compacted", 1, (short) 1).configs(Map.of(
                "cleanup.policy", "compact", "internal.segment.bytes", "16384", "segment.ms", "100",
                "min.cleanable.dirty.ratio", "0.01", "min.compaction.lag.ms", "0", "delete.retention.ms", "0")));
            // Tiered storage: rolled segments copied to the remote store (tests/kafka/FolderRemoteStorage.java)
            // and deleted locally, their life recorded in __remote_log_metadata.
            topics.add(new NewTopic("tiered", 1, (short) 1).configs(Map.of(
                "remote.storage.enable", "true", "internal.segment.bytes", "16384",
                "local.retention.ms", "1000", "index.interval.bytes", "512")));
            topics.add(new NewTopic("compacted-txn", 1, (short) 1).configs(Map.of(
                "cleanup.policy", "compact", "internal.segment.bytes", "16384", "segment.ms", "100",
                "min.cleanable.dirty.ratio", "0.01", "min.compaction.lag.ms", "0")));
            topics.add(new NewTopic("trimmed", 1, (short) 1));
            topics.add(new NewTopic("doomed", 1, (short) 1));
            // A producer whose clock runs a year ahead, on a topic that takes any timestamp: retention keeps the
            // segment until that year has passed (and retention.ms after it).
            topics.add(new NewTopic("future", 1, (short) 1).configs(Map.of(
                "message.timestamp.after.max.ms", String.valueOf(Long.MAX_VALUE))));
            topics.add(new NewTopic("restarted", 1, (short) 1));
            topics.add(new NewTopic("retried", 1, (short) 1));
            topics.add(new NewTopic("pinned", 1, (short) 1).configs(Map.of(
                "cleanup.policy", "compact", "segment.ms", "100", "min.cleanable.dirty.ratio", "0.01",
                "min.compaction.lag.ms", "0")));
            admin.createTopics(topics).all().get();
        }
        for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) {
            produce("codec-" + codec, codec, 200, 20);
        }
        produce("rolled", "none", 3000, 50);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            // DeleteRecords: the log start offset moves inside a segment, whose batches below it stay, and
            // the leader epoch checkpoint is truncated from the start at it.
            admin.deleteRecords(Map.of(new org.apache.kafka.common.TopicPartition("rolled", 0),
                org.apache.kafka.clients.admin.RecordsToDelete.beforeOffset(450))).all().get();
        }
        produce("tiered", "lz4", 2000, 50);
        compacted();
        transactions();
        compactedTransactions();
        produce("trimmed", "none", 100, 10);
        produce("doomed", "none", 50, 10);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties("none"))) {
            long yearAhead = System.currentTimeMillis() + 365L * 24 * 3600 * 1000;
            producer.send(new ProducerRecord<>("future", 0, System.currentTimeMillis(), "now", "on time")).get();
            producer.send(new ProducerRecord<>("future", 0, yearAhead, "later", "a year ahead")).get();
        }
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            // DeleteRecords inside the batch of offsets 20-29 of the only segment: records 0-24 stay in it.
            admin.deleteRecords(Map.of(new org.apache.kafka.common.TopicPartition("trimmed", 0),
                org.apache.kafka.clients.admin.RecordsToDelete.beforeOffset(25))).all().get();
            // The broker renames doomed-0 to doomed-0.<id>-delete and removes it after log.segment.delete.delay.ms.
            admin.deleteTopics(List.of("doomed")).all().get();
        }
        restarted();
        retried();
        pinned();
        producerStates("restarted", "retried", "pinned");
        consumerGroup("classic-group", "classic", "codec-gzip");
        consumerGroup("consumer-group", "consumer", "codec-zstd");
        shareGroup("share-group", "codec-lz4");
        streamsGroup("streams-group", "codec-snappy");
        System.out.println("workload done");
    }

    static Properties producerProperties(String codec) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("key.serializer", StringSerializer.class.getName());
        props.put("value.serializer", StringSerializer.class.getName());
        props.put("compression.type", codec);
        props.put("linger.ms", "5");
        props.put("enable.idempotence", "true");
        return props;
    }

    /** count records in batches of about perBatch, some with headers and null keys. */
    static void produce(String topic, String codec, int count, int perBatch) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties(codec))) {
            for (int i = 0; i < count; i++) {
                RecordHeaders headers = new RecordHeaders();
                if (i % 3 == 0) headers.add("trace", ("t-" + i).getBytes());
                String key = i % 7 == 0 ? null : "key-" + i;
                producer.send(new ProducerRecord<>(topic, null, key, "value " + i + " of " + topic, headers));
                if (i % perBatch == perBatch - 1) producer.flush();
            }
        }
    }

    /** Keys written over and over, then tombstones: the cleaner leaves gaps and a delete horizon. */
    static void compacted() throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProperties("none"))) {
            for (int round = 0; round < 30; round++) {
                for (int key = 0; key < 20; key++) {
                    String value = (round == 29 && key % 4 == 0) ? null : "round " + round + " ".repeat(40);
                    producer.send(new ProducerRecord<>("compacted", "key-" + key, value));
                }
                producer.flush();
                Thread.sleep(15);
            }
        }
    }

    /**
     * Transactions on a compacted topic, a segment each (segment.ms): the eleventh is aborted, the twelfth rolls
     * it out of the active segment, and the cleaner removes its records and keeps its ABORT marker (and, until a
     * later pass sees none of its batches, its .txnindex entry: CleanedTransactionMetadata).
     */
    static void compactedTransactions() throws Exception {
        Properties props = producerProperties("none");
        props.put("transactional.id", "txn-compacted");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            producer.initTransactions();
            for (int round = 0; round < 12; round++) {
                boolean abort = round == 10;
                producer.beginTransaction();
                for (int key = 0; key < 20; key++) {
                    String value = (abort ? "aborted " : "round ") + round + " ".repeat(60);
                    producer.send(new ProducerRecord<>("compacted-txn", "key-" + key, value));
                }
                producer.flush();
                if (abort) producer.abortTransaction(); else producer.commitTransaction();
                Thread.sleep(150);   // past segment.ms: the next append rolls the segment
            }
        }
    }

    /** Two producers: commit, abort, commit; the second leaves its last transaction open. */
    static void transactions() throws Exception {
        for (String id : List.of("txn-a", "txn-b")) {
            Properties props = producerProperties("none");
            props.put("transactional.id", id);
            props.put("transaction.timeout.ms", "600000");   // the open one stays open while the tests run
            KafkaProducer<String, String> producer = new KafkaProducer<>(props);
            producer.initTransactions();
            for (String outcome : List.of("commit", "abort", "commit", "open")) {
                if (outcome.equals("open") && id.equals("txn-a")) break;
                producer.beginTransaction();
                for (int i = 0; i < 5; i++) {
                    producer.send(new ProducerRecord<>("txn", id + "-" + i, outcome + " " + i));
                }
                producer.flush();
                if (outcome.equals("commit")) producer.commitTransaction();
                if (outcome.equals("abort")) producer.abortTransaction();
            }
            if (id.equals("txn-b")) {
                producer.close(Duration.ZERO);   // no commit, no abort: the transaction is still open
            } else {
                producer.close();
            }
        }
    }

    /**
     * One transactional.id, two producers in turn (an application restarted): each commits a transaction; the
     * first leaves a second one open, which the second's initTransactions has the coordinator abort as it bumps
     * the epoch (TransactionCoordinator.handleInitProducerId), so an ABORT marker is written for it.
     */
    static void restarted() throws Exception {
        for (int run = 0; run < 2; run++) {
            Properties props = producerProperties("none");
            props.put("transactional.id", "txn-restarted");
            props.put("transaction.timeout.ms", "600000");
            KafkaProducer<String, String> producer = new KafkaProducer<>(props);
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < 5; i++) {
                producer.send(new ProducerRecord<>("restarted", "key-" + i, "run " + run + " committed " + i));
            }
            producer.commitTransaction();
            if (run == 0) {
                producer.beginTransaction();
                for (int i = 0; i < 5; i++) {
                    producer.send(new ProducerRecord<>("restarted", "key-" + i, "run 0 left open " + i));
                }
                producer.flush();
                producer.close(Duration.ZERO);   // no commit, no abort: gone with its transaction open
            } else {
                producer.close();
            }
        }
    }

    static final int RETRIED_RECORDS = 60;

    /**
     * An idempotent producer whose every connection passes a CuttingProxy that loses the answer to three of its
     * Produce requests: it retries each batch with the same sequence, and the broker, which had appended it,
     * answers the retry as a duplicate instead of appending it again. Prints how many answers were lost and
     * how many records the producer retried, then every record a consumer reads of the topic.
     */
    static void retried() throws Exception {
        Properties props = producerProperties("none");
        props.put("bootstrap.servers", "127.0.0.1:" + proxyPort);
        props.put("retry.backoff.ms", "20");
        props.put("reconnect.backoff.ms", "20");
        try (CuttingProxy proxy = new CuttingProxy(proxyPort, proxiedListener, 3);
             KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = 0; i < RETRIED_RECORDS; i++) {
                producer.send(new ProducerRecord<>("retried", 0, "key-" + i, "retried " + i));
                if (i % 5 == 4) producer.flush();
            }
            double retries = producer.metrics().entrySet().stream()
                .filter(e -> e.getKey().name().equals("record-retry-total") && e.getKey().group().equals("producer-metrics"))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).sum();
            System.out.println("retried: answers lost " + proxy.cut.get() + ", records retried " + (long) retries);
        }
        Properties consumerProps = new Properties();
        consumerProps.put("bootstrap.servers", bootstrap);
        consumerProps.put("key.deserializer", StringDeserializer.class.getName());
        consumerProps.put("value.deserializer", StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
            TopicPartition partition = new TopicPartition("retried", 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            int seen = 0;
            long deadline = System.currentTimeMillis() + 30000;
            while (seen < RETRIED_RECORDS && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    System.out.println("retried: consumed " + record.offset() + " " + record.value());
                    seen++;
                }
            }
        }
    }

    /**
     * A TCP proxy on loopback in front of the broker's PROXIED listener. It passes every request and answer
     * through, but for `cuts` Produce requests (api key 0; one in three, from the second) it waits for the
     * broker's answer and then, instead of passing it on, closes both connections: the broker has appended the
     * batch, the producer never hears so. Each connection has two threads, which end when it closes.
     */
    static final class CuttingProxy implements AutoCloseable {
        final ServerSocket server;
        final String brokerHost;
        final int brokerPort;
        final AtomicInteger cutsLeft;
        final AtomicInteger produceRequests = new AtomicInteger();
        final AtomicInteger cut = new AtomicInteger();

        CuttingProxy(int port, String broker, int cuts) throws IOException {
            server = new ServerSocket(port, 16, InetAddress.getLoopbackAddress());
            brokerHost = broker.substring(0, broker.lastIndexOf(':'));
            brokerPort = Integer.parseInt(broker.substring(broker.lastIndexOf(':') + 1));
            cutsLeft = new AtomicInteger(cuts);
            Thread acceptor = new Thread(this::accept, "proxy-accept");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        void accept() {
            while (!server.isClosed()) {
                try {
                    Socket client = server.accept();
                    Socket upstream = new Socket(brokerHost, brokerPort);
                    Set<Integer> doomed = ConcurrentHashMap.newKeySet();   // correlation ids whose answer is lost
                    start(() -> requests(client, upstream, doomed));
                    start(() -> answers(upstream, client, doomed));
                } catch (IOException closed) {
                    return;
                }
            }
        }

        static void start(Runnable pump) {
            Thread thread = new Thread(pump, "proxy-pump");
            thread.setDaemon(true);
            thread.start();
        }

        /** Kafka's framing: a 4-byte size, then a request header (api key, api version, correlation id, ...). */
        void requests(Socket client, Socket upstream, Set<Integer> doomed) {
            try (DataInputStream in = new DataInputStream(client.getInputStream());
                 DataOutputStream out = new DataOutputStream(upstream.getOutputStream())) {
                while (true) {
                    byte[] frame = new byte[in.readInt()];
                    in.readFully(frame);
                    ByteBuffer header = ByteBuffer.wrap(frame);
                    short apiKey = header.getShort(0);
                    if (apiKey == 0 && produceRequests.incrementAndGet() % 3 == 2
                            && cutsLeft.getAndUpdate(left -> Math.max(left - 1, 0)) > 0) {
                        doomed.add(header.getInt(4));
                    }
                    out.writeInt(frame.length);
                    out.write(frame);
                    out.flush();
                }
            } catch (IOException closed) {
                closeQuietly(client, upstream);
            }
        }

        /** An answer starts with the correlation id of its request. */
        void answers(Socket upstream, Socket client, Set<Integer> doomed) {
            try (DataInputStream in = new DataInputStream(upstream.getInputStream());
                 DataOutputStream out = new DataOutputStream(client.getOutputStream())) {
                while (true) {
                    byte[] frame = new byte[in.readInt()];
                    in.readFully(frame);
                    if (doomed.remove(ByteBuffer.wrap(frame).getInt(0))) {
                        cut.incrementAndGet();
                        closeQuietly(client, upstream);
                        return;
                    }
                    out.writeInt(frame.length);
                    out.write(frame);
                    out.flush();
                }
            } catch (IOException closed) {
                closeQuietly(client, upstream);
            }
        }

        static void closeQuietly(Socket... sockets) {
            for (Socket socket : sockets) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // already closed
                }
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }

    /**
     * A transaction left open on a compacted topic between records of an idempotent producer, each in a segment
     * of its own (segment.ms): the transaction holds the last stable offset at its first offset, and the cleaner
     * cleans the segment before it and no further (LogCleanerManager.cleanableOffsets).
     */
    static void pinned() throws Exception {
        try (KafkaProducer<String, String> plain = new KafkaProducer<>(producerProperties("none"))) {
            sendKeys(plain, "pinned", "before");
            Thread.sleep(150);   // past segment.ms: the next append rolls the segment
            Properties props = producerProperties("none");
            props.put("transactional.id", "txn-pinned");
            props.put("transaction.timeout.ms", "600000");   // open while the tests run
            KafkaProducer<String, String> transactional = new KafkaProducer<>(props);
            transactional.initTransactions();
            transactional.beginTransaction();
            for (int key = 0; key < 5; key++) {
                transactional.send(new ProducerRecord<>("pinned", "key-" + key, "never committed"));
            }
            transactional.flush();
            transactional.close(Duration.ZERO);
            Thread.sleep(150);
            sendKeys(plain, "pinned", "after");
            Thread.sleep(150);
            sendKeys(plain, "pinned", "after again");
        }
    }

    static void sendKeys(KafkaProducer<String, String> producer, String topic, String value) {
        for (int key = 0; key < 20; key++) {
            producer.send(new ProducerRecord<>(topic, "key-" + key, value));
        }
        producer.flush();
    }

    /** What the partition leader holds of each producer (DescribeProducers), partition 0 of each topic. */
    static void producerStates(String... topics) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            for (String topic : topics) {
                TopicPartition partition = new TopicPartition(topic, 0);
                for (var state : admin.describeProducers(List.of(partition)).partitionResult(partition).get()
                        .activeProducers()) {
                    System.out.println("producer-state " + topic + "-0 " + state.producerId() + " "
                        + state.producerEpoch() + " " + state.lastSequence() + " "
                        + state.currentTransactionStartOffset().orElse(-1));
                }
            }
        }
    }

    static void consumerGroup(String group, String protocol, String topic) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("group.protocol", protocol);
        props.put("auto.offset.reset", "earliest");
        props.put("enable.auto.commit", "false");
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic));
            int seen = 0;
            long deadline = System.currentTimeMillis() + 30000;
            while (seen < 200 && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                seen += records.count();
                if (!records.isEmpty()) consumer.commitSync();
            }
        }
    }

    static void shareGroup(String group, String topic) {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            // A share group starts at the latest offset unless told otherwise (share.auto.offset.reset).
            var resource = new org.apache.kafka.common.config.ConfigResource(
                org.apache.kafka.common.config.ConfigResource.Type.GROUP, group);
            var op = new org.apache.kafka.clients.admin.AlterConfigOp(
                new org.apache.kafka.clients.admin.ConfigEntry("share.auto.offset.reset", "earliest"),
                org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET);
            admin.incrementalAlterConfigs(Map.of(resource, (Collection<org.apache.kafka.clients.admin.AlterConfigOp>) List.of(op))).all().get();
        } catch (Exception error) {
            throw new RuntimeException(error);
        }
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props)) {
            consumer.subscribe(List.of(topic));
            int seen = 0;
            long deadline = System.currentTimeMillis() + 30000;
            while (seen < 200 && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                seen += records.count();
                consumer.commitSync();
            }
        }
    }

    /** A Kafka Streams application of the streams group protocol: a stateless copy of a topic. */
    static void streamsGroup(String group, String topic) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("application.id", group);
        props.put("group.protocol", "streams");
        props.put("auto.offset.reset", "earliest");
        props.put("commit.interval.ms", "100");
        props.put("default.key.serde", Serdes.String().getClass().getName());
        props.put("default.value.serde", Serdes.String().getClass().getName());
        StreamsBuilder builder = new StreamsBuilder();
        builder.<String, String>stream(topic).filter((key, value) -> key != null).to(topic + "-copied");
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic + "-copied", 1, (short) 1))).all().get();
        }
        try (KafkaStreams streams = new KafkaStreams(builder.build(), props)) {
            streams.start();
            long deadline = System.currentTimeMillis() + 30000;
            while (System.currentTimeMillis() < deadline) {
                Thread.sleep(200);
                var lag = streams.metrics().entrySet().stream()
                    .filter(e -> e.getKey().name().equals("records-consumed-total")).findFirst();
                if (lag.isPresent() && ((Number) lag.get().getValue().metricValue()).doubleValue() >= 200) break;
            }
            Thread.sleep(500);   // a last commit (commit.interval.ms)
        }
    }
}
