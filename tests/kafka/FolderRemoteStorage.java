// A RemoteStorageManager that keeps "remote" segments in a local folder, so the real_kafka tests can turn on
// tiered storage (KIP-405) without a cloud store: the broker then copies rolled segments out and writes
// their life to __remote_log_metadata through its default TopicBasedRemoteLogMetadataManager, which is
// what kbatch is tested on. (Kafka's own LocalTieredStorage lives in a test jar Maven Central does not
// serve for every release.) Compiled by tests/real_kafka.py into the broker's class path.
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.kafka.server.log.remote.storage.LogSegmentData;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteStorageException;
import org.apache.kafka.server.log.remote.storage.RemoteStorageManager;

public class FolderRemoteStorage implements RemoteStorageManager {
    private Path root;

    @Override
    public void configure(Map<String, ?> configs) {
        root = Paths.get(String.valueOf(configs.get("folder")));
    }

    private Path folder(RemoteLogSegmentMetadata metadata) {
        return root.resolve(metadata.remoteLogSegmentId().id().toString());
    }

    @Override
    public Optional<RemoteLogSegmentMetadata.CustomMetadata> copyLogSegmentData(
            RemoteLogSegmentMetadata metadata, LogSegmentData data) throws RemoteStorageException {
        try {
            Path folder = Files.createDirectories(folder(metadata));
            Files.copy(data.logSegment(), folder.resolve("segment"), StandardCopyOption.REPLACE_EXISTING);
            Files.copy(data.offsetIndex(), folder.resolve("OFFSET"), StandardCopyOption.REPLACE_EXISTING);
            Files.copy(data.timeIndex(), folder.resolve("TIMESTAMP"), StandardCopyOption.REPLACE_EXISTING);
            Files.copy(data.producerSnapshotIndex(), folder.resolve("PRODUCER_SNAPSHOT"), StandardCopyOption.REPLACE_EXISTING);
            if (data.transactionIndex().isPresent()) {
                Files.copy(data.transactionIndex().get(), folder.resolve("TRANSACTION"), StandardCopyOption.REPLACE_EXISTING);
            }
            ByteBuffer epochs = data.leaderEpochIndex().duplicate();
            byte[] bytes = new byte[epochs.remaining()];
            epochs.get(bytes);
            Files.write(folder.resolve("LEADER_EPOCH"), bytes);
            return Optional.empty();
        } catch (IOException error) {
            throw new RemoteStorageException(error);
        }
    }

    @Override
    public InputStream fetchLogSegment(RemoteLogSegmentMetadata metadata, int startPosition) throws RemoteStorageException {
        return fetchLogSegment(metadata, startPosition, Integer.MAX_VALUE - 1);
    }

    @Override
    public InputStream fetchLogSegment(RemoteLogSegmentMetadata metadata, int startPosition, int endPosition)
            throws RemoteStorageException {
        try (RandomAccessFile file = new RandomAccessFile(folder(metadata).resolve("segment").toFile(), "r")) {
            long end = Math.min(file.length(), (long) endPosition + 1);
            byte[] bytes = new byte[(int) Math.max(0, end - startPosition)];
            file.seek(startPosition);
            file.readFully(bytes);
            return new ByteArrayInputStream(bytes);
        } catch (IOException error) {
            throw new RemoteStorageException(error);
        }
    }

    @Override
    public InputStream fetchIndex(RemoteLogSegmentMetadata metadata, IndexType indexType) throws RemoteStorageException {
        try {
            Path path = folder(metadata).resolve(indexType.name());
            return new ByteArrayInputStream(Files.exists(path) ? Files.readAllBytes(path) : new byte[0]);
        } catch (IOException error) {
            throw new RemoteStorageException(error);
        }
    }

    @Override
    public void deleteLogSegmentData(RemoteLogSegmentMetadata metadata) throws RemoteStorageException {
        try (Stream<Path> paths = Files.walk(folder(metadata))) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException error) {
            throw new RemoteStorageException(error);
        }
    }

    @Override
    public void close() {
    }
}
