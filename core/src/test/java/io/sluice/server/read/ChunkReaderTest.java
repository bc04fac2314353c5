package io.sluice.server.read;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.sluice.protocol.ChunkExtents;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chunk reader serves applications in turn: a small job's read queued behind a large job's many
 * waits for one of them, not all. Real files; the reader's one thread is held while the reads queue
 * so that the order they run in is what is checked.
 */
class ChunkReaderTest {
  @TempDir Path dir;

  @Test
  void aSmallJobsReadWaitsForOneTurnOfTheLargeJobNotForAllOfIt() throws Exception {
    Path file = Files.write(dir.resolve("split.data"), new byte[4096]);
    ChunkExtents chunks = ChunkExtents.contiguous(List.of(0L, 4096L));
    ThreadPoolExecutor thread =
        new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
    try (ChunkReader reader = new ChunkReader(thread)) {
      CountDownLatch hold = new CountDownLatch(1);
      thread.execute(
          () -> {
            try {
              hold.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
      List<String> done = Collections.synchronizedList(new ArrayList<>());
      List<CompletableFuture<ByteBuf>> reads = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        reads.add(read(reader, "large-job", file, chunks, done));
      }
      reads.add(read(reader, "small-job", file, chunks, done));
      hold.countDown();
      for (CompletableFuture<ByteBuf> r : reads) {
        ByteBuf body = r.get(30, TimeUnit.SECONDS);
        assertThat(body.readableBytes()).isEqualTo(4096);
        body.release();
      }
      assertThat(done).hasSize(51);
      assertThat(done.indexOf("small-job")).isEqualTo(1);
    }
  }

  private static CompletableFuture<ByteBuf> read(
      ChunkReader reader, String app, Path file, ChunkExtents chunks, List<String> done) {
    CompletableFuture<ByteBuf> read =
        reader.read(app, file, chunks, 0, UnpooledByteBufAllocator.DEFAULT);
    read.whenComplete((b, e) -> done.add(app));
    return read;
  }
}
