package io.sluice.server.storage;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The commit's rename of an {@code .inprogress} file to its final name. With {@code
 * sluice.commit.fsync} the rename itself is made durable too: the directory that holds the entry is
 * fsynced after it, or a power loss could bring back the old name (and a restarted server would
 * drop a split it had reported committed).
 */
final class DurableRename {
  private DurableRename() {}

  static void rename(Path from, Path to, boolean fsync) throws IOException {
    Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
    if (fsync) {
      fsyncDirectory(to.getParent());
    }
  }

  /** Forces a directory's entries to disk (supported on Linux; elsewhere it may do nothing). */
  static void fsyncDirectory(Path dir) throws IOException {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (UnsupportedOperationException e) {
      // a platform that cannot open directories (Windows): the rename is as durable as it gets
    }
  }
}
