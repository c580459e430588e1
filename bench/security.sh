# Sourced by bench/run.sh: the SASL_SSL side of the single brokers. Both get
# the same second listener, SASL_SSL on 127.0.0.1 beside their PLAINTEXT one,
# configured with the same Kafka property lines (kbroker reads Kafka's keys),
# the same keystore and the same SCRAM-SHA-512 user, created the same way:
# kafka-configs against the PLAINTEXT listener (AlterUserScramCredentials),
# which KRaft Kafka stores in its metadata log and kbroker in its own store.
#
# The test certificates are made afresh for every run with the JDK's keytool
# into the run directory (deleted with it), so nothing secret is kept in the
# repository and no certificate ever expires under the bench:
#   $dir/ca.p12          the CA's key pair (CN=kbroker-bench-ca, basic
#                        constraints CA:true)
#   $dir/broker.p12      the broker's key, its certificate signed by the CA
#                        with subjectAltName IP:127.0.0.1 (the clients check
#                        the address they dial: Kafka's default
#                        ssl.endpoint.identification.algorithm=https), and
#                        the CA certificate above it in the chain
#   $dir/truststore.p12  the CA certificate alone, for the clients
# All PKCS12 with the password SSL_PASSWORD; both brokers load the same
# keystore, so both serve the same certificate chain and key size.

SSL_PASSWORD=bench-secret

# make_certs DIR: the three stores above, in DIR.
make_certs() {
	local dir=$1
	mkdir -p "$dir"
	local -a common=(-storetype PKCS12 -storepass "$SSL_PASSWORD" -keyalg RSA -keysize 2048 -validity 2)
	{
		keytool -genkeypair -alias ca -dname "CN=kbroker-bench-ca" -ext bc:c \
			-keystore "$dir/ca.p12" "${common[@]}"
		keytool -exportcert -rfc -alias ca -keystore "$dir/ca.p12" -storepass "$SSL_PASSWORD" \
			-file "$dir/ca.pem"
		keytool -genkeypair -alias broker -dname "CN=127.0.0.1" -ext SAN=IP:127.0.0.1 \
			-keystore "$dir/broker.p12" "${common[@]}"
		keytool -certreq -alias broker -keystore "$dir/broker.p12" -storepass "$SSL_PASSWORD" \
			-file "$dir/broker.csr"
		# The SAN goes on the signed certificate too: keytool -gencert does not
		# copy extensions from the request unless told to.
		keytool -gencert -rfc -alias ca -keystore "$dir/ca.p12" -storepass "$SSL_PASSWORD" -validity 2 \
			-ext SAN=IP:127.0.0.1 -ext KU=digitalSignature,keyEncipherment -ext EKU=serverAuth \
			-infile "$dir/broker.csr" -outfile "$dir/broker.pem"
		keytool -importcert -noprompt -alias ca -file "$dir/ca.pem" \
			-keystore "$dir/broker.p12" -storetype PKCS12 -storepass "$SSL_PASSWORD"
		keytool -importcert -noprompt -alias broker -file "$dir/broker.pem" \
			-keystore "$dir/broker.p12" -storetype PKCS12 -storepass "$SSL_PASSWORD"
		keytool -importcert -noprompt -alias ca -file "$dir/ca.pem" \
			-keystore "$dir/truststore.p12" -storetype PKCS12 -storepass "$SSL_PASSWORD"
	} >"$dir/keytool.log" 2>&1 || {
		echo "bench: keytool failed:" >&2
		tail -5 "$dir/keytool.log" >&2
		return 1
	}
}

# The bench's SASL user. SCRAM-SHA-512 rather than PLAIN: the broker keeps
# only a salted hash, not the password; its cost (4096 PBKDF2 iterations on
# each side) is paid once per connection, not per request, so a workload's
# few long-lived connections barely feel it.
SASL_USER=bench
SASL_PASSWORD=bench-secret
SASL_MECHANISM=SCRAM-SHA-512

# sasl_ssl_broker_props CERTS: the property lines of the SASL_SSL listener
# both brokers add to their configuration (the listener itself is in each
# broker's listeners and listener.security.protocol.map). Kafka's SASL
# server wants a JAAS entry for every enabled mechanism even when, as with
# SCRAM, the login module takes no options (Kafka's JaasContext).
sasl_ssl_broker_props() {
	local certs=$1
	cat <<PROPS
sasl.enabled.mechanisms=$SASL_MECHANISM
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=PKCS12
ssl.keystore.location=$certs/broker.p12
ssl.keystore.password=$SSL_PASSWORD
ssl.truststore.type=PKCS12
ssl.truststore.location=$certs/truststore.p12
ssl.truststore.password=$SSL_PASSWORD
PROPS
}

# write_sasl_ssl_client_config CERTS FILE: the client properties every
# SASL_SSL workload passes with --command-config; Kafka's default
# ssl.endpoint.identification.algorithm=https checks the broker's
# certificate against 127.0.0.1, which its subjectAltName holds.
write_sasl_ssl_client_config() {
	local certs=$1 file=$2
	cat >"$file" <<PROPS
security.protocol=SASL_SSL
sasl.mechanism=$SASL_MECHANISM
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$SASL_USER" password="$SASL_PASSWORD";
ssl.truststore.type=PKCS12
ssl.truststore.location=$certs/truststore.p12
ssl.truststore.password=$SSL_PASSWORD
PROPS
}

# add_sasl_user PLAINTEXT_BOOTSTRAP SASL_BOOTSTRAP LOG: creates the SCRAM user
# through the PLAINTEXT listener, then waits (up to 60 s) until a client
# logs in with it over SASL_SSL (30 tries a second apart); the broker may
# apply a credential after answering (Kafka: once its metadata log has the
# record).
add_sasl_user() {
	local plain=$1 sasl=$2 log=$3 i
	if ! grep -qxF sasl-user "$RUN/commands.seen" 2>/dev/null; then
		echo sasl-user >>"$RUN/commands.seen"
		echo "compat/bin/kafka-configs --bootstrap-server <PLAINTEXT listener> --alter --add-config '$SASL_MECHANISM=[iterations=4096,password=$SASL_PASSWORD]' --entity-type users --entity-name $SASL_USER" >>"$RUN/commands.txt"
	fi
	"$TOOLS/kafka-configs" --bootstrap-server "$plain" --alter \
		--add-config "$SASL_MECHANISM=[iterations=4096,password=$SASL_PASSWORD]" \
		--entity-type users --entity-name "$SASL_USER" >>"$log" 2>&1 || {
		echo "bench: kafka-configs could not add the SCRAM user on $plain; see $log" >&2
		return 1
	}
	for ((i = 0; i < 30; i++)); do
		if "$TOOLS/kafka-topics" --bootstrap-server "$sasl" --command-config "$SASL_CLIENT_CONFIG" \
			--list >>"$log" 2>&1; then
			return 0
		fi
		sleep 1
	done
	echo "bench: no SASL_SSL login as $SASL_USER on $sasl after 30 tries; see $log" >&2
	return 1
}
