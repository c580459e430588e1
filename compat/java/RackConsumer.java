// RackConsumer is Kafka's Java consumer with client.rack set, for the
// follower-fetching test (compat/cluster/follower_fetch_test.go, KIP-392).
//
//   RackConsumer BOOTSTRAP TOPIC RACK TOTAL TIMEOUT_MS
//       reads partition 0 of TOPIC from its start (assigned, no group)
//       until TOTAL records have arrived, printing "record <offset>" for
//       each as it comes, then "done". Exits non-zero when TIMEOUT_MS
//       passes first.
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class RackConsumer {
    public static void main(String[] args) {
        String bootstrap = args[0], topic = args[1], rack = args[2];
        int total = Integer.parseInt(args[3]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[4]);

        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.rack", rack);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("request.timeout.ms", "10000");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            int got = 0;
            while (got < total) {
                if (System.currentTimeMillis() > deadline) {
                    System.out.flush();
                    System.err.println("timed out after " + got + " of " + total + " records");
                    System.exit(2);
                }
                ConsumerRecords<byte[], byte[]> recs = c.poll(Duration.ofMillis(200));
                for (ConsumerRecord<byte[], byte[]> r : recs) {
                    System.out.println("record " + r.offset());
                    got++;
                }
                System.out.flush();
            }
            System.out.println("done");
        }
    }
}
