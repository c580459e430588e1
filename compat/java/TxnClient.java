// TxnClient drives Kafka's own Java client (compat/lib) for the transaction
// tests in compat (txn_java_test.go) and compat/cluster. It prints one line
// per fact the Go test checks; anything unexpected is an exception and a
// non-zero exit.
//
//   produce BOOTSTRAP TOPIC TXN_ID PARTITIONS PER_PARTITION PATTERN
//       one transaction per letter of PATTERN (C commits, A aborts), each
//       writing PER_PARTITION records to every partition; record values are
//       t<txn>-p<partition>-r<n>. Prints "txn <i> committed|aborted".
//   consume BOOTSTRAP TOPIC ISOLATION PARTITIONS TIMEOUT_MS
//       reads every partition from its start to its end offset as the
//       isolation level (read_committed|read_uncommitted) sees it. Prints
//       "end <p> <offset>" then "record <p> <offset> <value>" in order.
//   fence BOOTSTRAP TOPIC TXN_ID
//       a first producer opens a transaction (values first-r<n>); a second
//       with the same transactional.id fences it and commits second-r<n>;
//       the first then tries to write first-late and commit. Prints
//       "first fenced: <exception class>..." or "first committed".
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class TxnClient {
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "produce":
                produce(args[1], args[2], args[3], Integer.parseInt(args[4]), Integer.parseInt(args[5]), args[6]);
                break;
            case "consume":
                consume(args[1], args[2], args[3], Integer.parseInt(args[4]), Long.parseLong(args[5]));
                break;
            case "fence":
                fence(args[1], args[2], args[3]);
                break;
            default:
                throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    static KafkaProducer<String, String> producer(String bootstrap, String txnId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("transactional.id", txnId);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        // Bounded: a broker that never answers fails the run, not the clock.
        p.put("max.block.ms", "30000");
        p.put("delivery.timeout.ms", "30000");
        p.put("request.timeout.ms", "10000");
        return new KafkaProducer<>(p);
    }

    static void produce(String bootstrap, String topic, String txnId, int partitions, int perPartition, String pattern) {
        try (KafkaProducer<String, String> pr = producer(bootstrap, txnId)) {
            pr.initTransactions();
            for (int i = 0; i < pattern.length(); i++) {
                pr.beginTransaction();
                for (int p = 0; p < partitions; p++) {
                    for (int r = 0; r < perPartition; r++) {
                        String v = "t" + i + "-p" + p + "-r" + r;
                        pr.send(new ProducerRecord<>(topic, p, v, v));
                    }
                }
                if (pattern.charAt(i) == 'C') {
                    pr.commitTransaction();
                    System.out.println("txn " + i + " committed");
                } else {
                    pr.flush();
                    pr.abortTransaction();
                    System.out.println("txn " + i + " aborted");
                }
            }
        }
    }

    static void consume(String bootstrap, String topic, String isolation, int partitions, long timeoutMs) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("isolation.level", isolation);
        p.put("enable.auto.commit", "false");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("default.api.timeout.ms", "30000");
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < partitions; i++) tps.add(new TopicPartition(topic, i));
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            c.assign(tps);
            c.seekToBeginning(tps);
            // endOffsets answers as the consumer's isolation level: the last
            // stable offset under read_committed, the high watermark otherwise.
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            for (TopicPartition tp : tps) System.out.println("end " + tp.partition() + " " + end.get(tp));
            Map<Integer, List<String>> lines = new HashMap<>();
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (!caughtUp(c, tps, end)) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("not at the end offsets " + end + " within " + timeoutMs + " ms");
                }
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    lines.computeIfAbsent(r.partition(), k -> new ArrayList<>())
                        .add("record " + r.partition() + " " + r.offset() + " " + r.value());
                }
            }
            for (int i = 0; i < partitions; i++) {
                for (String l : lines.getOrDefault(i, List.of())) System.out.println(l);
            }
        }
    }

    static boolean caughtUp(KafkaConsumer<String, String> c, List<TopicPartition> tps, Map<TopicPartition, Long> end) {
        for (TopicPartition tp : tps) {
            if (c.position(tp) < end.get(tp)) return false;
        }
        return true;
    }

    static void fence(String bootstrap, String topic, String txnId) {
        try (KafkaProducer<String, String> first = producer(bootstrap, txnId);
             KafkaProducer<String, String> second = producer(bootstrap, txnId)) {
            first.initTransactions();
            first.beginTransaction();
            for (int r = 0; r < 3; r++) first.send(new ProducerRecord<>(topic, 0, "first-r" + r, "first-r" + r));
            first.flush();
            System.out.println("first open");

            second.initTransactions();
            second.beginTransaction();
            for (int r = 0; r < 3; r++) second.send(new ProducerRecord<>(topic, 0, "second-r" + r, "second-r" + r));
            second.commitTransaction();
            System.out.println("second committed");

            try {
                first.send(new ProducerRecord<>(topic, 0, "first-late", "first-late")).get();
                first.commitTransaction();
                System.out.println("first committed");
            } catch (Exception e) {
                StringBuilder chain = new StringBuilder("first fenced:");
                for (Throwable c = e; c != null; c = c.getCause()) chain.append(' ').append(c.getClass().getName());
                System.out.println(chain);
            }
        }
    }
}
