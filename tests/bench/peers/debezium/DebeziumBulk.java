/*
 * The pipeline a JVM shop assembles to keep OpenSearch equal to a PostgreSQL
 * table without Kafka: Debezium's embedded engine and PostgreSQL connector
 * (pgoutput, snapshot then stream), the new-record-state transform that
 * turns each change into the row itself, and a bulk client on
 * java.net.http. It owns only that glue; it must never decide what a
 * document holds (Debezium's converters do) and never print the password.
 *
 * Settings come from the environment, the password too (PGPASSWORD):
 *   PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE  the source
 *   DBZ_TABLE    schema.table                   the synced table
 *   DBZ_INDEX    index                          where its rows go
 *   DBZ_SLOT     slot and publication name
 *   DBZ_OFFSETS  file the engine keeps its offsets in
 *   OS_URL       the node
 *   DBZ_BATCH    documents per bulk request (default 1000)
 *   DBZ_CONCURRENCY  bulk requests open at once (default 1)
 *   DBZ_POLL_MS  the connector's poll.interval.ms (default: Debezium's)
 *
 * Each engine batch is at most DBZ_BATCH * DBZ_CONCURRENCY records; it is cut
 * into requests of DBZ_BATCH sent at once, and the batch is marked processed
 * (so its offsets may be committed) only when every request succeeded. A
 * failed request ends the process with status 1.
 */
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.Json;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

public final class DebeziumBulk {
	private static final String BUILDER =
	    "io.debezium.embedded.async.ConvertingAsyncEngineBuilderFactory";

	private final HttpClient http = HttpClient.newBuilder()
	    .version(HttpClient.Version.HTTP_1_1)
	    .connectTimeout(Duration.ofSeconds(10))
	    .build();
	private final URI bulk;
	private final String index;
	private final int batch;

	private DebeziumBulk(String url, String index, int batch) {
		this.bulk = URI.create(url + "/_bulk?filter_path=errors,items.*.error");
		this.index = index;
		this.batch = batch;
	}

	private static String env(String name, String dflt) {
		String v = System.getenv(name);
		if (v == null || v.isEmpty()) {
			if (dflt == null)
				throw new IllegalArgumentException(name + " is not set");
			return dflt;
		}
		return v;
	}

	/* the key converter writes {"id":42}: the id is the one field's value */
	private static String idOf(String key) {
		int colon = key.indexOf(':');
		String v = key.substring(colon + 1, key.lastIndexOf('}')).trim();
		if (v.startsWith("\""))
			v = v.substring(1, v.length() - 1);
		return v;
	}

	private static void escape(StringBuilder sb, String s) {
		for (int i = 0; i < s.length(); i++) {
			char c = s.charAt(i);
			if (c == '"' || c == '\\')
				sb.append('\\');
			sb.append(c);
		}
	}

	private CompletableFuture<String> send(List<ChangeEvent<String, String>> part) {
		StringBuilder sb = new StringBuilder(part.size() * 256);
		for (ChangeEvent<String, String> e : part) {
			String id = idOf(e.key());
			/* a delete arrives as a tombstone: no value */
			sb.append(e.value() == null ? "{\"delete\":{\"_index\":\""
			    : "{\"index\":{\"_index\":\"");
			escape(sb, index);
			sb.append("\",\"_id\":\"");
			escape(sb, id);
			sb.append("\"}}\n");
			if (e.value() != null)
				sb.append(e.value()).append('\n');
		}
		HttpRequest req = HttpRequest.newBuilder(bulk)
		    .header("Content-Type", "application/x-ndjson")
		    .timeout(Duration.ofSeconds(120))
		    .POST(HttpRequest.BodyPublishers.ofString(sb.toString(),
			StandardCharsets.UTF_8))
		    .build();
		return http.sendAsync(req, HttpResponse.BodyHandlers.ofString())
		    .thenApply(r -> {
			    if (r.statusCode() != 200 ||
				r.body().startsWith("{\"errors\":true"))
				    throw new IllegalStateException("bulk failed: " +
					r.statusCode() + " " + r.body().substring(0,
					Math.min(300, r.body().length())));
			    return r.body();
		    });
	}

	private void handle(List<ChangeEvent<String, String>> records,
	    DebeziumEngine.RecordCommitter<ChangeEvent<String, String>> committer)
	    throws InterruptedException {
		List<ChangeEvent<String, String>> rows = new ArrayList<>();
		for (ChangeEvent<String, String> e : records)
			if (e.key() != null)	/* heartbeats and the like */
				rows.add(e);
		List<CompletableFuture<String>> open = new ArrayList<>();
		for (int i = 0; i < rows.size(); i += batch)
			open.add(send(rows.subList(i, Math.min(rows.size(), i + batch))));
		try {
			CompletableFuture.allOf(open.toArray(new CompletableFuture[0])).join();
		} catch (RuntimeException ex) {
			System.err.println("debezium-bulk: " + ex.getMessage());
			System.exit(1);
		}
		for (ChangeEvent<String, String> e : records)
			committer.markProcessed(e);
		committer.markBatchFinished();
	}

	public static void main(String[] args) throws Exception {
		int batch = Integer.parseInt(env("DBZ_BATCH", "1000"));
		int conc = Integer.parseInt(env("DBZ_CONCURRENCY", "1"));
		String slot = env("DBZ_SLOT", null);
		DebeziumBulk sink = new DebeziumBulk(env("OS_URL", null),
		    env("DBZ_INDEX", null), batch);

		Properties p = new Properties();
		p.setProperty("name", slot);
		p.setProperty("connector.class",
		    "io.debezium.connector.postgresql.PostgresConnector");
		p.setProperty("offset.storage",
		    "org.apache.kafka.connect.storage.FileOffsetBackingStore");
		p.setProperty("offset.storage.file.filename", env("DBZ_OFFSETS", null));
		p.setProperty("offset.flush.interval.ms", "1000");
		p.setProperty("database.hostname", env("PGHOST", null));
		p.setProperty("database.port", env("PGPORT", "5432"));
		p.setProperty("database.user", env("PGUSER", null));
		p.setProperty("database.password", env("PGPASSWORD", null));
		p.setProperty("database.dbname", env("PGDATABASE", null));
		p.setProperty("topic.prefix", slot);
		p.setProperty("plugin.name", "pgoutput");
		p.setProperty("slot.name", slot);
		p.setProperty("publication.name", slot);
		p.setProperty("publication.autocreate.mode", "filtered");
		p.setProperty("table.include.list", env("DBZ_TABLE", null));
		p.setProperty("snapshot.mode", "initial");
		/* numeric(12,2) as "12.50", not as base64 of its unscaled bytes */
		p.setProperty("decimal.handling.mode", "string");
		p.setProperty("max.batch.size", Integer.toString(batch * conc));
		p.setProperty("max.queue.size",
		    Integer.toString(Math.max(8192, 4 * batch * conc)));
		String poll = System.getenv("DBZ_POLL_MS");
		if (poll != null && !poll.isEmpty())
			p.setProperty("poll.interval.ms", poll);
		p.setProperty("transforms", "unwrap");
		p.setProperty("transforms.unwrap.type",
		    "io.debezium.transforms.ExtractNewRecordState");
		p.setProperty("key.converter.schemas.enable", "false");
		p.setProperty("value.converter.schemas.enable", "false");

		CountDownLatch done = new CountDownLatch(1);
		boolean[] failed = { false };
		DebeziumEngine<ChangeEvent<String, String>> engine =
		    DebeziumEngine.create(Json.class, Json.class, Json.class,
		    BUILDER)
		    .using(p)
		    .notifying(sink::handle)
		    .using((success, message, error) -> {
			    if (!success) {
				    failed[0] = true;
				    System.err.println("debezium-bulk: engine stopped: " +
					message + (error != null ? ": " + error : ""));
			    }
			    done.countDown();
		    })
		    .build();
		ExecutorService ex = Executors.newSingleThreadExecutor();
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			try {
				engine.close();
				done.await();
			} catch (IOException | InterruptedException e) {
				/* exiting anyway */
			}
		}));
		ex.execute(engine);
		done.await();
		ex.shutdown();
		if (failed[0])
			System.exit(1);
	}
}
