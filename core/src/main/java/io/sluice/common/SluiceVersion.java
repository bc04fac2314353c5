package io.sluice.common;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The version of Sluice this process runs, as the build wrote it. */
public final class SluiceVersion {
  private static final String VERSION = load();

  private SluiceVersion() {}

  public static String get() {
    return VERSION;
  }

  private static String load() {
    try (InputStream in =
        SluiceVersion.class.getResourceAsStream("/io/sluice/sluice-version.properties")) {
      if (in == null) {
        return "unknown";
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version", "unknown");
    } catch (IOException e) {
      return "unknown";
    }
  }
}
