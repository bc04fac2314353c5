package io.sluice.auth;

import com.google.protobuf.ByteString;
import io.sluice.network.ConnectionHandshake;
import io.sluice.network.Message;
import io.sluice.network.TransportClient;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.proto.AuthHello;
import io.sluice.protocol.proto.AuthProof;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.Status;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A client's side of the authentication exchange ({@link AuthCodes}), run on every new connection
 * before its first request. A coordinator (it holds the cluster secret) also registers its
 * application's key. The server must prove it holds the key too, so a client never sends data to an
 * endpoint that merely accepts connections.
 */
public final class ClientAuthenticator implements ConnectionHandshake {
  private final byte[] appSecret;
  private final Optional<byte[]> clusterSecret;

  public ClientAuthenticator(byte[] appSecret, Optional<byte[]> clusterSecret) {
    this.appSecret = appSecret.clone();
    this.clusterSecret = clusterSecret.map(byte[]::clone);
  }

  @Override
  public CompletableFuture<Void> handshake(TransportClient client, String appId) {
    byte[] key = AuthCodes.appKey(appSecret, appId);
    byte[] clientNonce = AuthCodes.nonce();
    AuthHello.Builder hello =
        AuthHello.newBuilder().setAppId(appId).setClientNonce(ByteString.copyFrom(clientNonce));
    clusterSecret.ifPresent(s -> hello.setRegistration(AuthCodes.register(s, appId, key)));
    return client
        .send(id -> Messages.request(MessageType.AUTH_HELLO, hello.setRequestId(id).build(), id))
        .thenCompose(
            challengeMessage -> {
              Response challenge = answer(client, appId, challengeMessage);
              if (!challenge.hasAuthChallenge()) {
                throw failure(client, appId, "the server sent no challenge");
              }
              byte[] serverNonce = challenge.getAuthChallenge().getServerNonce().toByteArray();
              byte[] proof = AuthCodes.clientProof(key, appId, serverNonce, clientNonce);
              return client
                  .send(
                      id ->
                          Messages.request(
                              MessageType.AUTH_PROOF,
                              AuthProof.newBuilder()
                                  .setRequestId(id)
                                  .setClientProof(ByteString.copyFrom(proof))
                                  .build(),
                              id))
                  .thenAccept(
                      acceptedMessage -> {
                        Response accepted = answer(client, appId, acceptedMessage);
                        byte[] expected =
                            AuthCodes.serverProof(key, appId, serverNonce, clientNonce);
                        if (!accepted.hasAuthAccepted()
                            || !AuthCodes.same(
                                expected,
                                accepted.getAuthAccepted().getServerProof().toByteArray())) {
                          throw failure(
                              client,
                              appId,
                              "the server did not prove it holds the application's key: it is not"
                                  + " a server of this cluster, or its sluice.auth.clusterSecret"
                                  + " differs from the coordinator's");
                        }
                      });
            });
  }

  private static Response answer(TransportClient client, String appId, Message message) {
    message.release();
    Response r = message.header(Response.class);
    if (r.getStatus() == Status.OK) {
      return r;
    }
    if (r.getStatus() == Status.BAD_REQUEST && r.getMessage().contains("AUTH_HELLO")) {
      throw failure(
          client,
          appId,
          "the server does not authenticate connections (its sluice.auth.enabled is false) while"
              + " this client requires it: "
              + r.getMessage());
    }
    throw failure(client, appId, r.getStatus() + ": " + r.getMessage());
  }

  private static CompletionException failure(TransportClient client, String appId, String why) {
    return new CompletionException(
        new IOException(
            "Cannot authenticate application "
                + appId
                + " at Sluice server "
                + client.server()
                + ": "
                + why));
  }
}
