package p2o.esanalysis;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.LowerCaseFilter;
import org.apache.lucene.analysis.TokenFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.email.UAX29URLEmailTokenizer;
import org.apache.lucene.analysis.pattern.PatternCaptureGroupTokenFilter;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.index.analysis.TokenFilterFactory;
import org.elasticsearch.index.analysis.TokenizerFactory;
import org.elasticsearch.indices.analysis.AnalysisModule.AnalysisProvider;
import org.elasticsearch.plugins.AnalysisPlugin;
import org.elasticsearch.plugins.Plugin;

/**
 * Test-only: the analysis components the x-pack security index mapping
 * names (its "email" analyzer: the uax_url_email tokenizer, then the
 * pattern_capture, lowercase and unique filters). The integ-test distribution
 * lacks the module that normally provides them, so without this the node
 * cannot create the index that holds API keys. Each but unique is a thin
 * wrapper of a Lucene class shipped in the distribution's lib/.
 *
 * Only the interfaces TokenFilterFactory and TokenizerFactory are used,
 * not the abstract base classes, whose constructors differ between 8.x and
 * 9.x: the same class file then loads on both.
 */
public class SecurityIndexAnalysisPlugin extends Plugin implements AnalysisPlugin {

    @Override
    public Map<String, AnalysisProvider<TokenizerFactory>> getTokenizers() {
        // Lucene's default maximum token length, 255, is the module's too;
        // the security index sets none
        return Map.of("uax_url_email", (indexSettings, env, name, settings) ->
            TokenizerFactory.newFactory(name, UAX29URLEmailTokenizer::new));
    }

    @Override
    public Map<String, AnalysisProvider<TokenFilterFactory>> getTokenFilters() {
        return Map.of(
            // built only where an index names it with its settings: it has
            // no defaults to build a shared instance from
            "pattern_capture", AnalysisPlugin.requiresAnalysisSettings(
                (indexSettings, env, name, settings) -> patternCapture(name, settings)),
            "lowercase", (indexSettings, env, name, settings) -> filter(name, LowerCaseFilter::new),
            "unique", (indexSettings, env, name, settings) -> filter(name, Unique::new));
    }

    /** pattern_capture: "patterns" (required) and "preserve_original" (default true) */
    private static TokenFilterFactory patternCapture(String name, Settings settings) {
        List<String> regexes = settings.getAsList("patterns");
        if (regexes.isEmpty()) {
            throw new IllegalArgumentException("filter [" + name + "] needs at least one of \"patterns\"");
        }
        Pattern[] patterns = regexes.stream().map(Pattern::compile).toArray(Pattern[]::new);
        boolean preserveOriginal = settings.getAsBoolean("preserve_original", true);
        return filter(name, in -> new PatternCaptureGroupTokenFilter(in, preserveOriginal, patterns));
    }

    /**
     * unique: each term once per field value, the first time it occurs
     * (Lucene's RemoveDuplicatesTokenFilter drops a repeat only at the same
     * position). The security index sets no option for it.
     */
    private static final class Unique extends TokenFilter {
        private final CharTermAttribute term = addAttribute(CharTermAttribute.class);
        private final CharArraySet seen = new CharArraySet(8, false);

        Unique(TokenStream in) {
            super(in);
        }

        @Override
        public boolean incrementToken() throws IOException {
            while (input.incrementToken()) {
                if (seen.contains(term.buffer(), 0, term.length())) {
                    continue;
                }
                seen.add(Arrays.copyOf(term.buffer(), term.length()));
                return true;
            }
            return false;
        }

        @Override
        public void reset() throws IOException {
            super.reset();
            seen.clear();
        }
    }

    private interface Wrap {
        TokenStream apply(TokenStream in);
    }

    private static TokenFilterFactory filter(String name, Wrap wrap) {
        return new TokenFilterFactory() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public TokenStream create(TokenStream in) {
                return wrap.apply(in);
            }
        };
    }
}
