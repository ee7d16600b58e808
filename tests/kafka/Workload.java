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
// batch (log-start-offset-checkpoint), and a deleted topic whose -delete directory waits to be removed.
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;

public class Workload {
    static String bootstrap;

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
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
