package io.sluice.server.storage;

import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.TRUNCATE_EXISTING;
import static java.nio.file.StandardOpenOption.WRITE;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

/**
 * Files and directories only the server's own user can read: shuffle data and the state store
 * belong to the applications that wrote them, and another tenant's container on the same host must
 * not read them. A directory the server owns (a data directory, the state store) is made {@code
 * rwx------} whether it existed or not, so nothing below it can be reached by other users; files
 * the server creates are {@code rw-------} too. On a file system without POSIX permissions this
 * does nothing.
 */
public final class OwnerOnly {
  private static final boolean POSIX =
      FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
  private static final Set<PosixFilePermission> DIRECTORY =
      PosixFilePermissions.fromString("rwx------");
  private static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");

  private OwnerOnly() {}

  /**
   * Creates {@code dir} (and its parents, with the default permissions) if needed, and makes it
   * {@code rwx------}.
   *
   * @throws IOException naming the directory when it cannot be created or its permissions set
   */
  public static Path directory(Path dir) throws IOException {
    Files.createDirectories(dir);
    if (POSIX) {
      try {
        Files.setPosixFilePermissions(dir, DIRECTORY);
      } catch (IOException | SecurityException e) {
        throw new IOException(
            "Cannot make " + dir + " readable by the server's user only (rwx------): " + e, e);
      }
    }
    return dir;
  }

  /**
   * Opens {@code file} for writing (and reading, when {@code read}), created {@code rw-------} or
   * truncated, creating its parent directories when they are missing. The caller closes the
   * channel.
   */
  public static FileChannel createFile(Path file, boolean read) throws IOException {
    Set<StandardOpenOption> options = EnumSet.of(CREATE, TRUNCATE_EXISTING, WRITE);
    if (read) {
      options.add(READ);
    }
    try {
      return open(file, options);
    } catch (NoSuchFileException e) {
      // the first file of its directory (a shuffle's first split): the directories first; every
      // later file opens at once, without the two system calls that finding them there costs
      Files.createDirectories(file.getParent());
      return open(file, options);
    }
  }

  private static FileChannel open(Path file, Set<StandardOpenOption> options) throws IOException {
    return POSIX
        ? FileChannel.open(file, options, PosixFilePermissions.asFileAttribute(FILE))
        : FileChannel.open(file, options);
  }
}
