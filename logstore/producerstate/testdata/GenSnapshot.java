// Writes testdata/kafka-4.4.snapshot with Kafka's own ProducerStateManager:
//   java -cp 'compat/lib/*' logstore/producerstate/testdata/GenSnapshot.java logstore/producerstate/testdata/kafka-4.4.snapshot
// (addBatch is package-private, hence the reflection).
import java.io.File;
import java.lang.reflect.Method;
import java.util.OptionalLong;
import java.util.TreeMap;
import org.apache.kafka.storage.internals.log.ProducerStateEntry;
import org.apache.kafka.storage.internals.log.ProducerStateManager;

public class GenSnapshot {
    public static void main(String[] args) throws Exception {
        Method add = ProducerStateEntry.class.getDeclaredMethod("addBatch", short.class, int.class, long.class, int.class, long.class);
        add.setAccessible(true);
        TreeMap<Long, ProducerStateEntry> m = new TreeMap<>();
        ProducerStateEntry a = new ProducerStateEntry(1000L, (short) 3, -1, 0L, OptionalLong.empty());
        add.invoke(a, (short) 3, 31, 131L, 9, 1700000000000L);
        add.invoke(a, (short) 3, 41, 141L, 9, 1700000000123L);
        m.put(1000L, a);
        ProducerStateEntry b = new ProducerStateEntry(2000L, (short) 0, 7, 0L, OptionalLong.of(150L));
        add.invoke(b, (short) 0, 2, 160L, 4, 5L);
        m.put(2000L, b);
        ProducerStateEntry c = new ProducerStateEntry(3000L, (short) 1, -1, 77L, OptionalLong.empty());
        m.put(3000L, c);
        ProducerStateManager.writeSnapshot(new File(args[0]), m, true);
        for (ProducerStateEntry e : ProducerStateManager.readSnapshot(new File(args[0]))) System.out.println(e);
    }
}
