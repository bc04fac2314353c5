package io.sluice.network;

import io.sluice.common.ConfigKey;
import java.util.List;

/**
 * The {@code sluice.tls.*} settings; {@link Tls} reads them. Declared apart from it so that listing
 * the settings (docs, defaults file) needs no TLS classes.
 */
public final class TlsConf {
  private static final String PREFIX = "sluice.tls.";

  public static final ConfigKey<Boolean> ENABLED =
      ConfigKey.bool(
          PREFIX + "enabled",
          false,
          "Encrypt every Sluice connection with TLS: shuffle servers, the coordinator endpoint in"
              + " the driver or JobManager, their clients, and the metrics port (then HTTPS). Set"
              + " the same on servers and clients; a plain peer cannot connect to a TLS one.");
  public static final ConfigKey<String> PROTOCOLS =
      ConfigKey.string(
          PREFIX + "protocols",
          "TLSv1.3,TLSv1.2",
          "Comma-separated TLS protocol versions offered and accepted.");
  public static final ConfigKey<String> KEY_STORE =
      ConfigKey.string(
          PREFIX + "keyStore",
          "",
          "Key store (PKCS12 or JKS) holding this process's private key and certificate; needed"
              + " where a port is served under TLS: shuffle servers, and the driver or JobManager"
              + " (coordinator endpoint). Or give sluice.tls.certChain and sluice.tls.privateKey.");
  public static final ConfigKey<String> KEY_STORE_TYPE =
      ConfigKey.string(
          PREFIX + "keyStoreType",
          "PKCS12",
          "Type of sluice.tls.keyStore: PKCS12 or JKS (a PKCS12 setting reads JKS files too).");
  public static final ConfigKey<String> KEY_STORE_PASSWORD =
      ConfigKey.string(
          PREFIX + "keyStorePassword",
          "",
          "Password of sluice.tls.keyStore and of the key in it; prefer"
              + " sluice.tls.keyStorePasswordFile.");
  public static final ConfigKey<String> KEY_STORE_PASSWORD_FILE =
      ConfigKey.string(
          PREFIX + "keyStorePasswordFile",
          "",
          "File whose content (one line) is the password of sluice.tls.keyStore; wins over"
              + " sluice.tls.keyStorePassword.");
  public static final ConfigKey<String> CERT_CHAIN =
      ConfigKey.string(
          PREFIX + "certChain",
          "",
          "PEM file of this process's certificate chain, its own certificate first; with"
              + " sluice.tls.privateKey, instead of sluice.tls.keyStore.");
  public static final ConfigKey<String> PRIVATE_KEY =
      ConfigKey.string(
          PREFIX + "privateKey",
          "",
          "PEM file of the unencrypted PKCS#8 private key of sluice.tls.certChain.");
  public static final ConfigKey<String> TRUST_STORE =
      ConfigKey.string(
          PREFIX + "trustStore",
          "",
          "Key store (PKCS12 or JKS) of the certificates or CAs a client trusts; empty (and no"
              + " sluice.tls.trustCertChain) trusts the JVM's default CAs.");
  public static final ConfigKey<String> TRUST_STORE_TYPE =
      ConfigKey.string(
          PREFIX + "trustStoreType",
          "PKCS12",
          "Type of sluice.tls.trustStore: PKCS12 or JKS (a PKCS12 setting reads JKS files too).");
  public static final ConfigKey<String> TRUST_STORE_PASSWORD =
      ConfigKey.string(
          PREFIX + "trustStorePassword",
          "",
          "Password of sluice.tls.trustStore; may be empty. Prefer"
              + " sluice.tls.trustStorePasswordFile.");
  public static final ConfigKey<String> TRUST_STORE_PASSWORD_FILE =
      ConfigKey.string(
          PREFIX + "trustStorePasswordFile",
          "",
          "File whose content (one line) is the password of sluice.tls.trustStore; wins over"
              + " sluice.tls.trustStorePassword.");
  public static final ConfigKey<String> TRUST_CERT_CHAIN =
      ConfigKey.string(
          PREFIX + "trustCertChain",
          "",
          "PEM file of the certificates or CAs a client trusts, instead of sluice.tls.trustStore.");
  public static final ConfigKey<Boolean> VERIFY_HOSTNAME =
      ConfigKey.bool(
          PREFIX + "verifyHostname",
          true,
          "Clients check that the server's certificate names the host they connect to (a DNS"
              + " name or IP address in its subject alternative names).");

  public static final List<ConfigKey<?>> KEYS =
      List.of(
          ENABLED,
          PROTOCOLS,
          KEY_STORE,
          KEY_STORE_TYPE,
          KEY_STORE_PASSWORD,
          KEY_STORE_PASSWORD_FILE,
          CERT_CHAIN,
          PRIVATE_KEY,
          TRUST_STORE,
          TRUST_STORE_TYPE,
          TRUST_STORE_PASSWORD,
          TRUST_STORE_PASSWORD_FILE,
          TRUST_CERT_CHAIN,
          VERIFY_HOSTNAME);

  private TlsConf() {}
}
