package io.sluice.network;

import io.netty.handler.ssl.SslContextBuilder;
import io.sluice.common.ConfigKey;
import io.sluice.common.SluiceConf;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.UnrecoverableKeyException;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Loads what {@link Tls} needs from the {@code sluice.tls.*} settings: the protocol list, this
 * process's certificate and key, the certificates it trusts. Every failure is an {@link
 * IllegalArgumentException} naming the setting and the file, so bad settings stop a process at
 * startup, not at its first connection.
 */
final class TlsMaterial {
  private TlsMaterial() {}

  /** This process's certificate and key: key managers from a key store, or PEM files. */
  static final class Identity {
    final KeyManagerFactory keyManagers;
    final File certChain;
    final File privateKey;
    private final String source;

    private Identity(
        KeyManagerFactory keyManagers, File certChain, File privateKey, String source) {
      this.keyManagers = keyManagers;
      this.certChain = certChain;
      this.privateKey = privateKey;
      this.source = source;
    }

    String describe() {
      return source;
    }
  }

  static List<String> protocols(SluiceConf conf) {
    List<String> protocols = Tls.split(conf.get(TlsConf.PROTOCOLS));
    if (protocols.isEmpty()) {
      throw new IllegalArgumentException(TlsConf.PROTOCOLS + " names no protocol");
    }
    List<String> supported;
    try {
      supported = Arrays.asList(SSLContext.getDefault().getSupportedSSLParameters().getProtocols());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("this JVM has no default TLS implementation: " + e, e);
    }
    for (String p : protocols) {
      if (!supported.contains(p)) {
        throw new IllegalArgumentException(
            TlsConf.PROTOCOLS + ": this JVM does not support " + p + "; it supports " + supported);
      }
    }
    return Collections.unmodifiableList(protocols);
  }

  /** The configured identity, or null when there is none (a process that only connects). */
  static Identity identity(SluiceConf conf) {
    String keyStore = conf.get(TlsConf.KEY_STORE).trim();
    String certChain = conf.get(TlsConf.CERT_CHAIN).trim();
    String privateKey = conf.get(TlsConf.PRIVATE_KEY).trim();
    if (!keyStore.isEmpty() && !(certChain.isEmpty() && privateKey.isEmpty())) {
      throw new IllegalArgumentException(
          "Set either "
              + TlsConf.KEY_STORE
              + " or "
              + TlsConf.CERT_CHAIN
              + " and "
              + TlsConf.PRIVATE_KEY
              + ", not both");
    }
    if (!keyStore.isEmpty()) {
      return keyStoreIdentity(conf, keyStore);
    }
    if (certChain.isEmpty() != privateKey.isEmpty()) {
      throw new IllegalArgumentException(
          TlsConf.CERT_CHAIN + " and " + TlsConf.PRIVATE_KEY + " go together: set both or neither");
    }
    if (certChain.isEmpty()) {
      return null;
    }
    return new Identity(
        null,
        readableFile(certChain, TlsConf.CERT_CHAIN),
        readableFile(privateKey, TlsConf.PRIVATE_KEY),
        TlsConf.CERT_CHAIN
            + " "
            + Tls.path(certChain)
            + " and "
            + TlsConf.PRIVATE_KEY
            + " "
            + Tls.path(privateKey));
  }

  private static Identity keyStoreIdentity(SluiceConf conf, String keyStore) {
    char[] password =
        password(
            conf, TlsConf.KEY_STORE_PASSWORD, TlsConf.KEY_STORE_PASSWORD_FILE, TlsConf.KEY_STORE);
    KeyStore store =
        load(
            keyStore,
            conf.get(TlsConf.KEY_STORE_TYPE),
            password,
            TlsConf.KEY_STORE,
            TlsConf.KEY_STORE_TYPE);
    try {
      if (!hasPrivateKey(store)) {
        throw new IllegalArgumentException(
            TlsConf.KEY_STORE + " " + Tls.path(keyStore) + " holds no private key");
      }
      KeyManagerFactory kmf =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(store, password);
      return new Identity(kmf, null, null, TlsConf.KEY_STORE + " " + Tls.path(keyStore));
    } catch (UnrecoverableKeyException e) {
      throw new IllegalArgumentException(
          "The private key in "
              + TlsConf.KEY_STORE
              + " "
              + Tls.path(keyStore)
              + " does not open with its password ("
              + TlsConf.KEY_STORE_PASSWORD
              + " or "
              + TlsConf.KEY_STORE_PASSWORD_FILE
              + "; the key's password must be the store's): "
              + e.getMessage(),
          e);
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException(
          "Cannot use " + TlsConf.KEY_STORE + " " + Tls.path(keyStore) + ": " + e, e);
    }
  }

  /** Sets what a client trusts on {@code builder}; the JVM's default CAs when nothing is set. */
  static void trust(SluiceConf conf, SslContextBuilder builder) {
    String trustStore = conf.get(TlsConf.TRUST_STORE).trim();
    String trustCerts = conf.get(TlsConf.TRUST_CERT_CHAIN).trim();
    if (!trustStore.isEmpty() && !trustCerts.isEmpty()) {
      throw new IllegalArgumentException(
          "Set either " + TlsConf.TRUST_STORE + " or " + TlsConf.TRUST_CERT_CHAIN + ", not both");
    }
    if (!trustStore.isEmpty()) {
      char[] password =
          password(
              conf,
              TlsConf.TRUST_STORE_PASSWORD,
              TlsConf.TRUST_STORE_PASSWORD_FILE,
              TlsConf.TRUST_STORE);
      KeyStore store =
          load(
              trustStore,
              conf.get(TlsConf.TRUST_STORE_TYPE),
              password,
              TlsConf.TRUST_STORE,
              TlsConf.TRUST_STORE_TYPE);
      try {
        if (store.size() == 0) {
          throw new IllegalArgumentException(
              TlsConf.TRUST_STORE + " " + Tls.path(trustStore) + " holds no certificate");
        }
        TrustManagerFactory tmf =
            TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(store);
        builder.trustManager(tmf);
      } catch (GeneralSecurityException e) {
        throw new IllegalArgumentException(
            "Cannot use " + TlsConf.TRUST_STORE + " " + Tls.path(trustStore) + ": " + e, e);
      }
    } else if (!trustCerts.isEmpty()) {
      File file = readableFile(trustCerts, TlsConf.TRUST_CERT_CHAIN);
      try {
        builder.trustManager(file);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            TlsConf.TRUST_CERT_CHAIN
                + " "
                + file
                + " does not hold PEM certificates: "
                + e.getMessage()
                + (e.getCause() != null ? " (" + e.getCause().getMessage() + ")" : ""),
            e);
      }
    }
  }

  private static boolean hasPrivateKey(KeyStore store) throws GeneralSecurityException {
    for (String alias : Collections.list(store.aliases())) {
      if (store.isKeyEntry(alias)) {
        return true;
      }
    }
    return false;
  }

  private static KeyStore load(
      String file,
      String type,
      char[] password,
      ConfigKey<String> setting,
      ConfigKey<String> typeSetting) {
    Path path = readableFile(file, setting).toPath();
    KeyStore store;
    try {
      store = KeyStore.getInstance(type.trim());
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException(
          typeSetting + ": unknown key store type '" + type + "' (PKCS12 or JKS)", e);
    }
    try (InputStream in = Files.newInputStream(path)) {
      store.load(in, password);
      return store;
    } catch (IOException e) {
      if (e.getCause() instanceof UnrecoverableKeyException) {
        throw new IllegalArgumentException(
            "The password of "
                + setting
                + " "
                + path
                + " is wrong (set it with "
                + setting
                + "Password or "
                + setting
                + "PasswordFile)",
            e);
      }
      throw new IllegalArgumentException(
          "Cannot read "
              + setting
              + " "
              + path
              + " as a "
              + type
              + " key store ("
              + typeSetting
              + "): "
              + e.getMessage(),
          e);
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException(
          "Cannot read " + setting + " " + path + ": " + e.getMessage(), e);
    }
  }

  /** The password from its file when one is set, else from the setting itself. */
  private static char[] password(
      SluiceConf conf,
      ConfigKey<String> setting,
      ConfigKey<String> fileSetting,
      ConfigKey<String> store) {
    String file = conf.get(fileSetting).trim();
    if (file.isEmpty()) {
      return conf.get(setting).toCharArray();
    }
    Path path = readableFile(file, fileSetting).toPath();
    try {
      String text = Files.readString(path, StandardCharsets.UTF_8);
      int end = text.indexOf('\n');
      String line = end < 0 ? text : text.substring(0, end);
      return (line.endsWith("\r") ? line.substring(0, line.length() - 1) : line).toCharArray();
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "Cannot read the password of " + store + " from " + fileSetting + " " + path + ": " + e,
          e);
    }
  }

  private static File readableFile(String file, ConfigKey<String> setting) {
    Path path = Paths.get(file).toAbsolutePath();
    if (!Files.isRegularFile(path)) {
      throw new IllegalArgumentException(setting + ": no such file: " + path);
    }
    if (!Files.isReadable(path)) {
      throw new IllegalArgumentException(setting + ": cannot read " + path + " (permissions)");
    }
    return path.toFile();
  }
}
