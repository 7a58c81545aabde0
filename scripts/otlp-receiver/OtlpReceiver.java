// An OTLP/HTTP trace receiver for tests: decodes what it is sent with the OpenTelemetry project's
// own Java bindings of the OTLP protobufs (io.opentelemetry.proto:opentelemetry-proto) and keeps
// every span it accepted, for the test to read back.
//
// It follows the OTLP/HTTP specification (opentelemetry-proto docs/specification.md, "OTLP/HTTP"):
//   POST /v1/traces with Content-Type application/x-protobuf (binary ExportTraceServiceRequest)
//   or application/json (the OTLP JSON mapping: proto3 JSON with trace and span ids as hex, not
//   base64, enums as integers); the answer is an ExportTraceServiceResponse in the request's
//   encoding, 200. A body that does not decode is 400, any other content type 415, any other
//   path 404, any other method 405.
//   GET /debug/spans answers every span received so far, one JSON object per line (the OTLP JSON
//   mapping of the Span with hex ids, plus its resource and scope), in order of arrival.
//   GET /debug/requests answers how many export requests were accepted, per content type.
//   POST /debug/reset forgets them.
//
// Usage: java -cp <classpath> OtlpReceiver.java <port>  (prints "listening on 127.0.0.1:<port>")
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class OtlpReceiver {
  private static final List<String> SPANS = new ArrayList<>();
  private static final AtomicLong PROTOBUF_REQUESTS = new AtomicLong();
  private static final AtomicLong JSON_REQUESTS = new AtomicLong();
  // The OTLP JSON mapping writes these bytes fields as hex; proto3 JSON (JsonFormat) as base64.
  private static final Pattern HEX_ID = Pattern.compile("\"(traceId|spanId|parentSpanId)\"\\s*:\\s*\"([0-9a-fA-F]*)\"");
  private static final Pattern B64_ID = Pattern.compile("\"(traceId|spanId|parentSpanId)\"\\s*:\\s*\"([A-Za-z0-9+/=]*)\"");

  public static void main(String[] args) throws IOException {
    int port = Integer.parseInt(args.length > 0 ? args[0] : "14318");
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
    server.setExecutor(Executors.newFixedThreadPool(2));
    server.createContext("/", OtlpReceiver::handle);
    server.start();
    System.out.println("listening on 127.0.0.1:" + port);
  }

  private static void handle(HttpExchange ex) throws IOException {
    try {
      String path = ex.getRequestURI().getPath();
      String method = ex.getRequestMethod();
      if (path.equals("/v1/traces")) {
        if (!method.equals("POST")) {
          reply(ex, 405, "text/plain", "POST only\n".getBytes(StandardCharsets.UTF_8));
          return;
        }
        export(ex);
      } else if (path.equals("/debug/spans") && method.equals("GET")) {
        StringBuilder out = new StringBuilder();
        synchronized (SPANS) {
          for (String s : SPANS) out.append(s).append('\n');
        }
        reply(ex, 200, "application/x-ndjson", out.toString().getBytes(StandardCharsets.UTF_8));
      } else if (path.equals("/debug/requests") && method.equals("GET")) {
        String body = "{\"protobuf\":" + PROTOBUF_REQUESTS.get() + ",\"json\":" + JSON_REQUESTS.get() + "}\n";
        reply(ex, 200, "application/json", body.getBytes(StandardCharsets.UTF_8));
      } else if (path.equals("/debug/reset") && method.equals("POST")) {
        synchronized (SPANS) {
          SPANS.clear();
        }
        PROTOBUF_REQUESTS.set(0);
        JSON_REQUESTS.set(0);
        reply(ex, 200, "text/plain", "reset\n".getBytes(StandardCharsets.UTF_8));
      } else {
        reply(ex, 404, "text/plain", ("no such endpoint: " + path + "\n").getBytes(StandardCharsets.UTF_8));
      }
    } catch (RuntimeException e) {
      reply(ex, 500, "text/plain", (e + "\n").getBytes(StandardCharsets.UTF_8));
    } finally {
      ex.close();
    }
  }

  private static void export(HttpExchange ex) throws IOException {
    String type = String.valueOf(ex.getRequestHeaders().getFirst("Content-Type")).split(";")[0].trim();
    byte[] body;
    try (InputStream in = ex.getRequestBody()) {
      body = in.readAllBytes();
    }
    ExportTraceServiceRequest request;
    boolean json;
    try {
      if (type.equals("application/x-protobuf")) {
        request = ExportTraceServiceRequest.parseFrom(body);
        json = false;
      } else if (type.equals("application/json")) {
        ExportTraceServiceRequest.Builder b = ExportTraceServiceRequest.newBuilder();
        JsonFormat.parser().merge(hexIdsToBase64(new String(body, StandardCharsets.UTF_8)), b);
        request = b.build();
        json = true;
      } else {
        reply(ex, 415, "text/plain", ("unsupported content type " + type + "\n").getBytes(StandardCharsets.UTF_8));
        return;
      }
    } catch (InvalidProtocolBufferException | IllegalArgumentException e) {
      reply(ex, 400, "text/plain", ("bad request: " + e.getMessage() + "\n").getBytes(StandardCharsets.UTF_8));
      return;
    }
    List<String> received = new ArrayList<>();
    JsonFormat.Printer printer = JsonFormat.printer().omittingInsignificantWhitespace();
    for (ResourceSpans rs : request.getResourceSpansList()) {
      String resource = printer.print(rs.getResource());
      for (ScopeSpans ss : rs.getScopeSpansList()) {
        String scope = printer.print(ss.getScope());
        for (Span span : ss.getSpansList()) {
          received.add("{\"resource\":" + resource + ",\"scope\":" + scope + ",\"span\":" + base64IdsToHex(printer.print(span)) + "}");
        }
      }
    }
    synchronized (SPANS) {
      SPANS.addAll(received);
    }
    (json ? JSON_REQUESTS : PROTOBUF_REQUESTS).incrementAndGet();
    ExportTraceServiceResponse response = ExportTraceServiceResponse.getDefaultInstance();
    if (json) reply(ex, 200, "application/json", printer.print(response).getBytes(StandardCharsets.UTF_8));
    else reply(ex, 200, "application/x-protobuf", response.toByteArray());
  }

  private static String hexIdsToBase64(String text) {
    Matcher m = HEX_ID.matcher(text);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String b64 = Base64.getEncoder().encodeToString(HexFormat.of().parseHex(m.group(2)));
      m.appendReplacement(out, Matcher.quoteReplacement("\"" + m.group(1) + "\":\"" + b64 + "\""));
    }
    m.appendTail(out);
    return out.toString();
  }

  private static String base64IdsToHex(String text) {
    Matcher m = B64_ID.matcher(text);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String hex = HexFormat.of().formatHex(ByteString.copyFrom(Base64.getDecoder().decode(m.group(2))).toByteArray());
      m.appendReplacement(out, Matcher.quoteReplacement("\"" + m.group(1) + "\":\"" + hex + "\""));
    }
    m.appendTail(out);
    return out.toString();
  }

  private static void reply(HttpExchange ex, int status, String type, byte[] body) throws IOException {
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(body);
    }
  }
}
