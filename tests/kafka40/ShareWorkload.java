// What the Kafka 4.0 broker of the real_kafka tests writes: run as a single source file (java -cp JARS
// ShareWorkload.java BOOTSTRAP) with the Java clients of 4.0, against a broker with share groups enabled.
//
// A share group (KIP-932, early access in 4.0) consumes a topic and acknowledges every record explicitly:
// most accepted, some rejected, some released once and accepted when delivered again. Each commit is a
// WriteShareGroupState to the share coordinator, which writes a ShareSnapshotValue for the first and
// ShareUpdateValues after it to __share_group_state; the group coordinator writes the group's
// ShareGroupMetadataValue (and its members and assignments) to __consumer_offsets. Kafka 4.1 changed these
// values in place, so what is written here is read with 4.0's layout.
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class ShareWorkload {
    static final String TOPIC = "shared";
    static final String GROUP = "share-group";
    static final int RECORDS = 200;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            // A share group starts at the latest offset unless told otherwise (share.auto.offset.reset).
            AlterConfigOp earliest = new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                AlterConfigOp.OpType.SET);
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, GROUP),
                (Collection<AlterConfigOp>) List.of(earliest))).all().get();
        }
        Properties producerProps = new Properties();
        producerProps.put("bootstrap.servers", bootstrap);
        producerProps.put("key.serializer", StringSerializer.class.getName());
        producerProps.put("value.serializer", StringSerializer.class.getName());
        producerProps.put("linger.ms", "5");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(TOPIC, "key-" + i, "value " + i));
                if (i % 20 == 19) producer.flush();
            }
        }

        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", GROUP);
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        props.put("max.poll.records", "50");
        Set<Long> settled = new HashSet<>();
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props)) {
            consumer.subscribe(List.of(TOPIC));
            long deadline = System.currentTimeMillis() + 60000;
            while (settled.size() < RECORDS && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    int deliveries = record.deliveryCount().orElse((short) 1);
                    AcknowledgeType type = record.offset() % 10 == 3 ? AcknowledgeType.REJECT
                        : record.offset() % 7 == 0 && deliveries == 1 ? AcknowledgeType.RELEASE
                        : AcknowledgeType.ACCEPT;
                    consumer.acknowledge(record, type);
                    if (type != AcknowledgeType.RELEASE) settled.add(record.offset());
                }
                consumer.commitSync();
            }
        }
        if (settled.size() < RECORDS) {
            throw new IllegalStateException("the share group settled " + settled.size() + " of " + RECORDS);
        }
        System.out.println("workload done");
    }
}
