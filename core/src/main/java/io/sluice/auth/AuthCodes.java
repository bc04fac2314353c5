package io.sluice.auth;

import com.google.protobuf.ByteString;
import io.sluice.protocol.proto.AppRegistration;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The cryptography of authentication, all HMAC-SHA256 over length-prefixed fields with a label per
 * purpose, so no value computed for one purpose is valid for another.
 *
 * <ul>
 *   <li><b>Application key</b>: {@code K = HMAC(appSecret, "app-key", appId)}. Each application id
 *       (a Spark driver attempt, a Flink job) has its own key.
 *   <li><b>Registration</b> (coordinators only): the coordinator sends {@code K} sealed with a pad
 *       {@code HMAC(clusterSecret, "seal", appId, nonce)} and a MAC {@code HMAC(clusterSecret,
 *       "register", appId, nonce, sealed)}. A server that has no key for the id binds {@code K};
 *       one that has another refuses. Whoever lacks the cluster secret cannot register, and a
 *       registration seen on the wire reveals nothing and binds nothing new.
 *   <li><b>Connection</b>: the client sends a nonce, the server answers with its own; the client
 *       proves {@code HMAC(K, "client", appId, serverNonce, clientNonce)}, the server answers
 *       {@code HMAC(K, "server", ...)}, so each side knows the other holds {@code K}. Nothing on
 *       the wire lets an observer compute a key or reuse a proof on another connection.
 *   <li><b>At rest</b>: a server records {@code K} in its state store only sealed, {@code K xor
 *       HMAC(clusterSecret, "at-rest", appId)} followed by {@code HMAC(clusterSecret,
 *       "at-rest-mac", appId, sealed)}, so a copy of the state store does not authenticate anyone
 *       without the cluster secret.
 * </ul>
 */
public final class AuthCodes {
  static final int NONCE_BYTES = 16;
  static final int KEY_BYTES = 32;
  private static final String VERSION = "sluice-auth-v1 ";

  /**
   * A DRBG seeded once, here: it then draws no more entropy from the operating system per nonce, so
   * nonces can be made on event loops (the default provider reads /dev/urandom every time).
   */
  private static final SecureRandom RANDOM = drbg();

  private AuthCodes() {}

  /** The key of application id {@code appId}. */
  public static byte[] appKey(byte[] appSecret, String appId) {
    return hmac(appSecret, "app-key", utf8(appId));
  }

  /** A registration of {@code appKey} for {@code appId}, sealed and signed. */
  public static AppRegistration register(byte[] clusterSecret, String appId, byte[] appKey) {
    byte[] nonce = nonce();
    byte[] sealed = xor(appKey, hmac(clusterSecret, "seal", utf8(appId), nonce));
    return AppRegistration.newBuilder()
        .setNonce(ByteString.copyFrom(nonce))
        .setSealedKey(ByteString.copyFrom(sealed))
        .setMac(ByteString.copyFrom(hmac(clusterSecret, "register", utf8(appId), nonce, sealed)))
        .build();
  }

  /** The key a registration carries, or null when it was not signed with {@code clusterSecret}. */
  public static byte[] openRegistration(byte[] clusterSecret, String appId, AppRegistration r) {
    byte[] nonce = r.getNonce().toByteArray();
    byte[] sealed = r.getSealedKey().toByteArray();
    if (nonce.length != NONCE_BYTES || sealed.length != KEY_BYTES) {
      return null;
    }
    byte[] mac = hmac(clusterSecret, "register", utf8(appId), nonce, sealed);
    if (!MessageDigest.isEqual(mac, r.getMac().toByteArray())) {
      return null;
    }
    return xor(sealed, hmac(clusterSecret, "seal", utf8(appId), nonce));
  }

  /** Bytes of a key sealed at rest: the sealed key, then its MAC. */
  public static final int SEALED_AT_REST_BYTES = 2 * KEY_BYTES;

  /** {@code appKey} sealed for a server's state store (see the class comment). */
  public static byte[] sealAtRest(byte[] clusterSecret, String appId, byte[] appKey) {
    byte[] sealed = xor(appKey, hmac(clusterSecret, "at-rest", utf8(appId)));
    byte[] mac = hmac(clusterSecret, "at-rest-mac", utf8(appId), sealed);
    byte[] out = new byte[SEALED_AT_REST_BYTES];
    System.arraycopy(sealed, 0, out, 0, KEY_BYTES);
    System.arraycopy(mac, 0, out, KEY_BYTES, KEY_BYTES);
    return out;
  }

  /**
   * The key {@link #sealAtRest} sealed, or null when {@code record} was not sealed for {@code
   * appId} with {@code clusterSecret} (another secret, a damaged or older record).
   */
  public static byte[] openAtRest(byte[] clusterSecret, String appId, byte[] record) {
    if (record == null || record.length != SEALED_AT_REST_BYTES) {
      return null;
    }
    byte[] sealed = java.util.Arrays.copyOf(record, KEY_BYTES);
    byte[] mac = java.util.Arrays.copyOfRange(record, KEY_BYTES, SEALED_AT_REST_BYTES);
    if (!MessageDigest.isEqual(mac, hmac(clusterSecret, "at-rest-mac", utf8(appId), sealed))) {
      return null;
    }
    return xor(sealed, hmac(clusterSecret, "at-rest", utf8(appId)));
  }

  static byte[] clientProof(byte[] key, String appId, byte[] serverNonce, byte[] clientNonce) {
    return hmac(key, "client", utf8(appId), serverNonce, clientNonce);
  }

  static byte[] serverProof(byte[] key, String appId, byte[] serverNonce, byte[] clientNonce) {
    return hmac(key, "server", utf8(appId), serverNonce, clientNonce);
  }

  private static SecureRandom drbg() {
    SecureRandom random;
    try {
      random = SecureRandom.getInstance("DRBG");
    } catch (GeneralSecurityException e) {
      random = new SecureRandom();
    }
    random.nextBytes(new byte[NONCE_BYTES]); // seeds it now
    return random;
  }

  static byte[] nonce() {
    byte[] nonce = new byte[NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    return nonce;
  }

  /** A key nobody holds: answers for unknown applications look like those for known ones. */
  static byte[] randomKey() {
    byte[] key = new byte[KEY_BYTES];
    RANDOM.nextBytes(key);
    return key;
  }

  /** Compares in time independent of where the inputs differ. */
  static boolean same(byte[] a, byte[] b) {
    return MessageDigest.isEqual(a, b);
  }

  private static byte[] hmac(byte[] key, String label, byte[]... fields) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      mac.update(utf8(VERSION + label));
      for (byte[] field : fields) {
        mac.update(ByteBuffer.allocate(4).putInt(0, field.length));
        mac.update(field);
      }
      return mac.doFinal();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
    }
  }

  private static byte[] xor(byte[] a, byte[] b) {
    byte[] out = new byte[a.length];
    for (int i = 0; i < a.length; i++) {
      out[i] = (byte) (a[i] ^ b[i]);
    }
    return out;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
